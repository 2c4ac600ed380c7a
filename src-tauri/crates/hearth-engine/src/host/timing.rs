//! How long the two sides of the engine pipe wait for each other: the supervisor for an answer to
//! Stop, for a wedged process and at quit; the engine process for its replies to end at quit.

use std::time::Duration;

/// A reply asked to stop is answered within this, whatever the engine is doing.
pub const STOP_ANSWER: Duration = Duration::from_secs(1);
/// An engine still busy with a stopped request this long after Stop is wedged: it is killed and
/// started again. (Long enough for one prefill chunk of a large model on a slow CPU.)
pub const WEDGED_AFTER: Duration = Duration::from_secs(30);
/// Quitting never waits longer than this for the engine process.
pub const QUIT_WAIT: Duration = Duration::from_secs(2);
/// An engine process that has only reported its devices (no model was loaded or asked of it) ends
/// after this long: a Hearth waiting on its welcome screen holds no engine. The next request starts
/// one again.
pub const REST_AFTER: Duration = Duration::from_secs(30);
