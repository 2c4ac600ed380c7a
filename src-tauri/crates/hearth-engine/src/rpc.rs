//! Other machines' devices, through llama.cpp's RPC backend (`libggml-rpc.so`, a module like the
//! GPUs'): each server the load settings name (llama.cpp's `rpc-server`, "host:port") adds its
//! devices to this process's, and a model's layers are split over them by their free memory.
//!
//! llama.cpp's RPC client aborts the process when a server cannot be reached or stops answering,
//! so a server is first reached here, with a deadline, and refused in words when it does not
//! answer; one that goes away later costs the engine process (the supervisor says so and starts
//! another, which finds the server gone when the model is loaded again).

use std::ffi::CString;
use std::net::{TcpStream, ToSocketAddrs};
use std::sync::Mutex;
use std::time::Duration;

/// ggml's name of the RPC backend.
pub(crate) const BACKEND: &str = "RPC";
/// How long a server has to take a connection.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);

/// The servers whose devices this process has registered (ggml keeps them until it exits).
static ADDED: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// Registers the devices of each server in `endpoints` not registered yet; refused in words when
/// the RPC module is not loaded or a server does not answer. llama.cpp's backend must be up.
pub(crate) fn add_servers(endpoints: &[String]) -> Result<(), String> {
    if endpoints.is_empty() {
        return Ok(());
    }
    let mut added = ADDED.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let name = CString::new(BACKEND).expect("no NUL in the name");
    // SAFETY: a valid C string; null when no module registered the backend.
    let reg = unsafe { llama_cpp_sys_2::ggml_backend_reg_by_name(name.as_ptr()) };
    if reg.is_null() {
        return Err("this Hearth has no RPC backend (libggml-rpc.so is not beside its CPU backend): build it with \
                    scripts/build-backend.sh rpc, or remove the RPC servers from the model's load settings"
            .into());
    }
    let proc_name = CString::new("ggml_backend_rpc_add_server").expect("no NUL in the name");
    // SAFETY: a registered backend and a valid C string; null when the module has no such function.
    let add = unsafe { llama_cpp_sys_2::ggml_backend_reg_get_proc_address(reg, proc_name.as_ptr()) };
    if add.is_null() {
        return Err("the RPC backend found is of another llama.cpp: rebuild it with scripts/build-backend.sh rpc".into());
    }
    // SAFETY: the function ggml-rpc.h declares under this name.
    let add: unsafe extern "C" fn(*const std::os::raw::c_char) -> llama_cpp_sys_2::ggml_backend_reg_t = unsafe { std::mem::transmute(add) };
    for endpoint in endpoints {
        if added.contains(endpoint) {
            continue;
        }
        reach(endpoint)?;
        let c_endpoint = CString::new(endpoint.as_str()).map_err(|_| format!("{endpoint:?} holds a NUL byte"))?;
        // SAFETY: a valid C string; the server answered a moment ago (ggml aborts if it does not).
        let server = unsafe { add(c_endpoint.as_ptr()) };
        if server.is_null() {
            return Err(format!("the RPC server at {endpoint} offers no device"));
        }
        // SAFETY: a backend registry ggml just made for this server, registered once.
        unsafe { llama_cpp_sys_2::ggml_backend_register(server) };
        tracing::info!(%endpoint, "RPC server added");
        added.push(endpoint.clone());
    }
    Ok(())
}

/// Whether the RPC server at `endpoint` takes a connection now, in words when not.
pub(crate) fn reach(endpoint: &str) -> Result<(), String> {
    let unreachable = |why: String| {
        format!(
            "the RPC server at {endpoint} does not answer ({why}): start llama.cpp's rpc-server there \
             (scripts/build-backend.sh rpc builds it), or remove it from the model's load settings"
        )
    };
    let addresses = endpoint.to_socket_addrs().map_err(|e| unreachable(e.to_string()))?;
    let mut last = String::from("no address");
    for address in addresses {
        match TcpStream::connect_timeout(&address, CONNECT_TIMEOUT) {
            Ok(_) => return Ok(()),
            Err(e) => last = e.to_string(),
        }
    }
    Err(unreachable(last))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_server_that_does_not_answer_is_refused_in_words() {
        // A port nothing listens on: bound, then closed.
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let said = reach(&format!("127.0.0.1:{port}")).unwrap_err();
        assert!(said.contains("does not answer") && said.contains("rpc-server"), "{said}");
        let said = reach("no-such-host.invalid:50052").unwrap_err();
        assert!(said.contains("no-such-host.invalid:50052"), "{said}");
    }
}
