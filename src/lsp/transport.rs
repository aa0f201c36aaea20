//! The wire: JSON-RPC messages framed by `Content-Length` headers over byte streams.
//!
//! Architecture invariant: reading never gives up on bad input. A frame that is not
//! JSON, JSON that is not a JSON-RPC message, a frame without a length or one larger
//! than [`MAX_FRAME`] becomes an [`Incoming::Invalid`], which the server answers with
//! an error response (id `null` when no id can be read) before it reads on. Only the
//! end of the input (or an I/O error) ends reading. (`lsp-server`'s own stdio
//! transport stops at the first malformed frame, so the server frames by itself and
//! uses that crate for the message types only.)

use lsp_server::{ErrorCode, Message, RequestId};
use serde_json::Value;
use std::io::{self, BufRead, Read, Write};

/// The largest frame read; a larger one is skipped and answered with an error.
pub const MAX_FRAME: usize = 256 << 20;

/// The longest header line read (longer ones are cut there and read as garbage).
const MAX_HEADER_LINE: u64 = 64 << 10;

/// What one frame of input was.
#[derive(Debug)]
pub enum Incoming {
    Message(Message),
    /// A frame to answer with an error response: the request's id when it could be
    /// read, a JSON-RPC error code and a message.
    Invalid {
        id: Option<RequestId>,
        code: i32,
        message: String,
    },
}

/// Read one frame. `Ok(None)` at the end of the input (also inside a frame).
pub fn read_frame(r: &mut impl BufRead) -> io::Result<Option<Incoming>> {
    let mut length: Option<usize> = None;
    let mut bad_length: Option<String> = None;
    let mut lines = 0usize;
    loop {
        let mut line = Vec::new();
        let n = (&mut *r).take(MAX_HEADER_LINE).read_until(b'\n', &mut line)?;
        if n == 0 {
            return Ok(None);
        }
        let text = String::from_utf8_lossy(&line);
        let text = text.trim_end_matches(['\r', '\n']);
        if text.is_empty() {
            if lines == 0 {
                // Blank lines between frames are skipped.
                continue;
            }
            break;
        }
        lines += 1;
        // The header may follow garbage on the same line (the unframed body of a frame
        // whose header could not be read, which ends without a newline): found
        // anywhere in the line, it resynchronises the stream.
        if let Some(at) = text.to_ascii_lowercase().rfind("content-length:") {
            let value = text[at + "content-length:".len()..].trim();
            match value.parse::<usize>() {
                Ok(n) => length = Some(n),
                Err(_) => bad_length = Some(value.to_string()),
            }
        }
    }
    let Some(length) = length else {
        let message = match bad_length {
            Some(v) => format!("the Content-Length `{v}` is not a number of bytes"),
            None => "a message header without Content-Length".to_string(),
        };
        return Ok(Some(invalid(None, ErrorCode::ParseError, message)));
    };
    if length > MAX_FRAME {
        let skipped = io::copy(&mut (&mut *r).take(length as u64), &mut io::sink())?;
        if skipped < length as u64 {
            return Ok(None);
        }
        let message = format!("a message of {length} bytes (at most {MAX_FRAME} are read)");
        return Ok(Some(invalid(None, ErrorCode::InvalidRequest, message)));
    }
    let mut body = vec![0; length];
    if let Err(e) = r.read_exact(&mut body) {
        return if e.kind() == io::ErrorKind::UnexpectedEof { Ok(None) } else { Err(e) };
    }
    Ok(Some(parse_body(&body)))
}

/// A frame's body as a message, or why it is not one.
pub fn parse_body(body: &[u8]) -> Incoming {
    let value: Value = match serde_json::from_slice(body) {
        Ok(v) => v,
        Err(e) => return invalid(None, ErrorCode::ParseError, format!("not JSON: {e}")),
    };
    let id = value.get("id").and_then(|id| serde_json::from_value::<RequestId>(id.clone()).ok());
    if !value.is_object() {
        return invalid(id, ErrorCode::InvalidRequest, "not a JSON-RPC message object".into());
    }
    // A request whose id is neither a string nor a 32-bit integer (`2147483648`, `1.5`,
    // `true`, `{}`) would read as a notification and get no answer: it is answered
    // with an error (id `null`).
    if id.is_none()
        && value.get("method").is_some()
        && value.get("id").is_some_and(|i| !i.is_null())
    {
        return invalid(
            None,
            ErrorCode::InvalidRequest,
            "the request's id is neither a string nor a 32-bit integer".into(),
        );
    }
    match serde_json::from_value::<Message>(value) {
        Ok(m) => Incoming::Message(m),
        Err(e) => invalid(id, ErrorCode::InvalidRequest, format!("not a JSON-RPC message: {e}")),
    }
}

fn invalid(id: Option<RequestId>, code: ErrorCode, message: String) -> Incoming {
    Incoming::Invalid { id, code: code as i32, message }
}

/// A message as it is sent: with `"jsonrpc": "2.0"`.
pub fn to_value(m: &Message) -> Value {
    let mut v = serde_json::to_value(m).unwrap_or(Value::Null);
    if let Value::Object(o) = &mut v {
        o.insert("jsonrpc".into(), Value::from("2.0"));
    }
    v
}

/// An error response; `id: None` is sent as `null` (the id could not be read).
pub fn error_response(id: Option<RequestId>, code: i32, message: &str) -> Value {
    serde_json::json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": {"code": code, "message": message},
    })
}

/// Write one frame and flush.
pub fn write_frame(w: &mut impl Write, v: &Value) -> io::Result<()> {
    let body = serde_json::to_string(v).map_err(io::Error::other)?;
    write!(w, "Content-Length: {}\r\n\r\n{body}", body.len())?;
    w.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frames(input: &str) -> Vec<Incoming> {
        let mut r = io::BufReader::new(input.as_bytes());
        let mut out = Vec::new();
        while let Some(f) = read_frame(&mut r).unwrap() {
            out.push(f);
        }
        out
    }

    fn frame(body: &str) -> String {
        format!("Content-Length: {}\r\n\r\n{body}", body.len())
    }

    #[test]
    fn reads_messages_and_reads_on_after_garbage() {
        let input = [
            frame(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#),
            frame("{not json"),
            "X-Nonsense: 1\r\n\r\n".to_string(),
            "Content-Length: ten\r\n\r\n".to_string(),
            frame(r#"[1,2]"#),
            frame(r#"{"jsonrpc":"2.0","id":7,"params":{}}"#),
            frame(r#"{"jsonrpc":"2.0","method":"initialized","params":{}}"#),
        ]
        .concat();
        let got = frames(&input);
        assert_eq!(got.len(), 7);
        assert!(
            matches!(&got[0], Incoming::Message(Message::Request(r)) if r.method == "initialize")
        );
        let codes: Vec<(Option<RequestId>, i32)> = got[1..6]
            .iter()
            .map(|f| match f {
                Incoming::Invalid { id, code, .. } => (id.clone(), *code),
                Incoming::Message(m) => panic!("read {m:?} as a message"),
            })
            .collect();
        assert_eq!(
            codes,
            [
                (None, -32700),
                (None, -32700),
                (None, -32700),
                (None, -32600),
                (Some(RequestId::from(7)), -32600)
            ]
        );
        assert!(
            matches!(&got[6], Incoming::Message(Message::Notification(n)) if n.method == "initialized")
        );
    }

    #[test]
    fn requests_with_unreadable_ids_are_answered() {
        for id in ["2147483648", "1.5", "true", "{}", "[1]"] {
            let body = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"shutdown"}}"#);
            let got = frames(&frame(&body));
            assert!(
                matches!(&got[..], [Incoming::Invalid { id: None, code: -32600, .. }]),
                "{id}: {got:?}"
            );
        }
        // A null id is a notification's (no answer is due).
        let got = frames(&frame(r#"{"jsonrpc":"2.0","id":null,"method":"exit"}"#));
        assert!(matches!(&got[..], [Incoming::Message(Message::Notification(_))]), "{got:?}");
    }

    #[test]
    fn framing_resynchronises_after_a_header_line_without_a_colon() {
        let ok = frame(r#"{"jsonrpc":"2.0","id":2,"method":"shutdown"}"#);
        let input = format!("Content-Length 40\r\n\r\n{{\"jsonrpc\":\"2.0\",\"id\":1}}{ok}");
        let got = frames(&input);
        assert!(
            matches!(got.last(), Some(Incoming::Message(Message::Request(r))) if r.method == "shutdown"),
            "{got:?}"
        );
    }

    #[test]
    fn a_frame_cut_short_ends_the_input() {
        assert!(frames("Content-Length: 100\r\n\r\n{\"id\"").is_empty());
        assert!(frames("Content-Le").is_empty());
    }

    #[test]
    fn writes_what_it_reads() {
        let v = error_response(None, -32700, "bad");
        let mut buf = Vec::new();
        write_frame(&mut buf, &v).unwrap();
        let text = String::from_utf8(buf).unwrap();
        assert!(text.starts_with("Content-Length: "), "{text}");
        let got = frames(&text);
        // An error response without an id is not a message the server accepts.
        assert!(matches!(&got[0], Incoming::Invalid { id: None, .. }));
        assert!(text.contains(r#""id":null"#), "{text}");
    }
}
