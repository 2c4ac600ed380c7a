//! The window's command client, generated from the commands themselves. Each command is written
//! once, inside `command!`: the macro marks it `#[tauri::command]` and puts beside it a
//! `contract()` that reads its name, doc comment, window arguments and result type off the same
//! signature the compiler checks. `typescript_commands` turns them into the functions of
//! ui/src/ipc/bindings.ts, so a command renamed or retyped here is renamed or retyped there.

use std::collections::BTreeMap;

use ts_rs::{Config, TS, TypeVisitor};

use crate::ipc::IpcError;

/// One argument the window passes.
#[derive(Debug, Clone, PartialEq)]
pub enum WireArg {
    /// A JSON value of this TypeScript type.
    Value(String),
    /// A Channel the backend sends values of this type to; the window passes a callback.
    Channel(String),
}

/// A command as the window calls it.
#[derive(Debug, Clone)]
pub struct CommandContract {
    pub name: &'static str,
    pub docs: Vec<&'static str>,
    /// Snake-case names, in order; Tauri's wire names are their camelCase.
    pub args: Vec<(&'static str, WireArg)>,
    /// The TypeScript type of a successful result.
    pub returns: String,
    /// Declares the types its arguments and result are made of.
    pub declare: fn(&mut Declarations),
}

/// The TypeScript declarations of the types the commands carry, each once, by name: derived from
/// the commands' signatures, so no list of types is kept by hand. (By name, not in the order they
/// are met: ts-rs's derive visits a type's fields in an order that changes from build to build.)
pub struct Declarations {
    cfg: Config,
    decls: BTreeMap<String, String>,
}

impl Default for Declarations {
    fn default() -> Self {
        Declarations { cfg: ts_config(), decls: BTreeMap::new() }
    }
}

impl Declarations {
    /// The declarations, ordered by the types' names.
    pub fn into_decls(self) -> impl Iterator<Item = String> {
        self.decls.into_values()
    }
}

impl TypeVisitor for Declarations {
    /// `T` if it is a declared type (not a number, a string, a list …), then what it is made of.
    fn visit<T: TS + 'static + ?Sized>(&mut self) {
        if T::output_path().is_some() {
            let name = T::ident(&self.cfg);
            if self.decls.contains_key(&name) {
                return;
            }
            let decl = T::decl(&self.cfg);
            self.decls.insert(name, decl);
        }
        T::visit_dependencies(self);
        T::visit_generics(self);
    }
}

/// What a command resolves to in the window: the `Ok` of a `Result<_, IpcError>`, or the value.
pub trait WireReturn {
    fn ts(cfg: &Config) -> String;
    fn declare(decls: &mut Declarations);
}

impl<T: TS + 'static> WireReturn for Result<T, IpcError> {
    fn ts(cfg: &Config) -> String {
        T::name(cfg)
    }
    fn declare(decls: &mut Declarations) {
        decls.visit::<T>();
    }
}

macro_rules! plain_returns {
    ($($ty:ty),*) => {$(
        impl WireReturn for $ty {
            fn ts(cfg: &Config) -> String {
                <$ty as TS>::name(cfg)
            }
            fn declare(decls: &mut Declarations) {
                decls.visit::<$ty>();
            }
        }
    )*};
}
plain_returns!((), bool, Vec<hearth_hub::Download>, hearth_app::ChatCacheUsage, Vec<hearth_mcp::McpServerStatus>);

/// The payload type of a `Channel` argument.
pub trait ChannelPayload {
    fn ts(cfg: &Config) -> String;
    fn declare(decls: &mut Declarations);
}

impl<T: TS + serde::Serialize + Clone + 'static> ChannelPayload for tauri::ipc::Channel<T> {
    fn ts(cfg: &Config) -> String {
        T::name(cfg)
    }
    fn declare(decls: &mut Declarations) {
        decls.visit::<T>();
    }
}

/// The TypeScript config of every generated type.
pub fn ts_config() -> Config {
    Config::new().with_large_int("number")
}

/// How the window sees one argument of a command: none for what Tauri injects (`state`, `app`),
/// a callback for a Channel (named `on_…`), else a JSON value.
macro_rules! wire_arg {
    ($cfg:ident, state, $ty:ty) => {
        None
    };
    ($cfg:ident, app, $ty:ty) => {
        None
    };
    ($cfg:ident, on_event, $ty:ty) => {
        Some(("on_event", $crate::ipc::contract::WireArg::Channel(<$ty as $crate::ipc::contract::ChannelPayload>::ts(&$cfg))))
    };
    ($cfg:ident, on_update, $ty:ty) => {
        Some(("on_update", $crate::ipc::contract::WireArg::Channel(<$ty as $crate::ipc::contract::ChannelPayload>::ts(&$cfg))))
    };
    ($cfg:ident, on_progress, $ty:ty) => {
        Some(("on_progress", $crate::ipc::contract::WireArg::Channel(<$ty as $crate::ipc::contract::ChannelPayload>::ts(&$cfg))))
    };
    ($cfg:ident, $name:ident, $ty:ty) => {
        Some((stringify!($name), $crate::ipc::contract::WireArg::Value(<$ty as ts_rs::TS>::name(&$cfg))))
    };
}
pub(crate) use wire_arg;

/// Declares the types of one argument the window passes (as `wire_arg!` sees it).
macro_rules! declare_arg {
    ($decls:ident, state, $ty:ty) => {};
    ($decls:ident, app, $ty:ty) => {};
    ($decls:ident, on_event, $ty:ty) => {
        <$ty as $crate::ipc::contract::ChannelPayload>::declare($decls)
    };
    ($decls:ident, on_update, $ty:ty) => {
        <$ty as $crate::ipc::contract::ChannelPayload>::declare($decls)
    };
    ($decls:ident, on_progress, $ty:ty) => {
        <$ty as $crate::ipc::contract::ChannelPayload>::declare($decls)
    };
    ($decls:ident, $name:ident, $ty:ty) => {
        ts_rs::TypeVisitor::visit::<$ty>($decls)
    };
}
pub(crate) use declare_arg;

/// A command and, in a module of the same name, its `contract()`.
macro_rules! command {
    (@contract $name:ident [$($doc:literal),*] [$($arg:ident : $ty:ty),*] $ret:ty) => {
        #[doc(hidden)]
        pub mod $name {
            #[allow(unused_imports)]
            use super::*;

            pub fn contract() -> $crate::ipc::contract::CommandContract {
                let cfg = $crate::ipc::contract::ts_config();
                $crate::ipc::contract::CommandContract {
                    name: stringify!($name),
                    docs: vec![$($doc),*],
                    args: [$($crate::ipc::contract::wire_arg!(cfg, $arg, $ty)),*].into_iter().flatten().collect(),
                    returns: <$ret as $crate::ipc::contract::WireReturn>::ts(&cfg),
                    declare: |decls| {
                        $($crate::ipc::contract::declare_arg!(decls, $arg, $ty);)*
                        <$ret as $crate::ipc::contract::WireReturn>::declare(decls);
                    },
                }
            }
        }
    };
    ($(#[doc = $doc:literal])* pub async fn $name:ident <R: Runtime> ($($arg:ident : $ty:ty),* $(,)?) -> $ret:ty $body:block) => {
        $(#[doc = $doc])*
        #[tauri::command]
        pub async fn $name<R: Runtime>($($arg: $ty),*) -> $ret $body
        $crate::ipc::contract::command!(@contract $name [$($doc),*] [$($arg: $ty),*] $ret);
    };
    ($(#[doc = $doc:literal])* pub async fn $name:ident ($($arg:ident : $ty:ty),* $(,)?) -> $ret:ty $body:block) => {
        $(#[doc = $doc])*
        #[tauri::command]
        pub async fn $name($($arg: $ty),*) -> $ret $body
        $crate::ipc::contract::command!(@contract $name [$($doc),*] [$($arg: $ty),*] $ret);
    };
    ($(#[doc = $doc:literal])* pub fn $name:ident ($($arg:ident : $ty:ty),* $(,)?) $(-> $ret:ty)? $body:block) => {
        $(#[doc = $doc])*
        #[tauri::command]
        pub fn $name($($arg: $ty),*) $(-> $ret)? $body
        $crate::ipc::contract::command!(@contract $name [$($doc),*] [$($arg: $ty),*] $crate::ipc::contract::command!(@or_unit $($ret)?));
    };
    (@or_unit $ret:ty) => { $ret };
    (@or_unit) => { () };
}
pub(crate) use command;

pub(crate) fn camel_case(snake: &str) -> String {
    let mut out = String::new();
    let mut upper = false;
    for c in snake.chars() {
        match c {
            '_' => upper = true,
            c if upper => {
                out.extend(c.to_uppercase());
                upper = false;
            }
            c => out.push(c),
        }
    }
    out
}

/// The generated client: one function per command, in `commands` order, typed with the
/// generated types. A Channel argument is a callback; the function wraps it.
pub fn typescript_commands(commands: &[CommandContract]) -> String {
    let mut out = String::from(
        "/** The backend's commands, as the window calls them. Rejections carry an `IpcError`. */\nexport const commands = {\n",
    );
    for command in commands {
        let docs: Vec<&str> = command.docs.iter().map(|d| d.trim()).collect();
        if !docs.is_empty() {
            out.push_str("  /**\n");
            for line in &docs {
                out.push_str(&format!("   *{}{line}\n", if line.is_empty() { "" } else { " " }));
            }
            out.push_str("   */\n");
        }
        let params: Vec<String> = command
            .args
            .iter()
            .map(|(name, arg)| match arg {
                WireArg::Value(ty) => format!("{}: {ty}", camel_case(name)),
                WireArg::Channel(ty) => format!("{}: (message: {ty}) => void", camel_case(name)),
            })
            .collect();
        let wire: Vec<String> = command
            .args
            .iter()
            .map(|(name, arg)| match arg {
                WireArg::Value(_) => camel_case(name),
                WireArg::Channel(ty) => format!("{0}: new Channel<{ty}>({0})", camel_case(name)),
            })
            .collect();
        let call = match wire.is_empty() {
            true => format!("invoke<{}>('{}')", command.returns, command.name),
            false => format!("invoke<{}>('{}', {{ {} }})", command.returns, command.name, wire.join(", ")),
        };
        out.push_str(&format!("  {}: ({}): Promise<{}> => {call},\n", camel_case(command.name), params.join(", "), command.returns));
    }
    out.push_str("};\n\nexport type Commands = typeof commands;\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_go_camel_case_as_tauri_sends_them() {
        for (snake, camel) in [("list_chats", "listChats"), ("on_event", "onEvent"), ("id", "id"), ("hub_fit", "hubFit")] {
            assert_eq!(camel_case(snake), camel);
        }
    }
}
