//! A lean HTTP/1.1 client for the load generator: one keep-alive connection per caller and server,
//! requests written from prepared bytes, responses parsed with `httparse`. On a 2-core machine the load
//! generator shares the CPU with the service, so its own cost per request shows up in the measurement
//! (reqwest took about a seventh of the CPU of a hot-counter run); this keeps that share small, as wrk would.

use std::io;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

pub struct Conn {
    host: String,
    stream: Option<TcpStream>,
    buf: Vec<u8>,
}

pub struct Response {
    pub status: u16,
    pub body: Vec<u8>,
}

impl Conn {
    /// `base` is `http://host:port` (no path); nothing is connected until the first request.
    pub fn new(base: &str) -> Conn {
        let host = base.trim_start_matches("http://").trim_end_matches('/').to_string();
        Conn { host, stream: None, buf: Vec::with_capacity(4096) }
    }

    /// POSTs a JSON body with a bearer token. A broken connection is dropped (the next request reconnects)
    /// and reported as an error, like a refused one: the caller decides whether errors are expected.
    pub async fn post_json(&mut self, path: &str, token: &str, body: &[u8]) -> io::Result<Response> {
        let result = self.exchange(path, token, body).await;
        if result.is_err() {
            self.stream = None;
        }
        result
    }

    async fn exchange(&mut self, path: &str, token: &str, body: &[u8]) -> io::Result<Response> {
        if self.stream.is_none() {
            let s = TcpStream::connect(&self.host).await?;
            s.set_nodelay(true)?;
            self.stream = Some(s);
        }
        let stream = self.stream.as_mut().expect("connected above");
        let mut req = Vec::with_capacity(200 + token.len() + body.len());
        req.extend_from_slice(b"POST ");
        req.extend_from_slice(path.as_bytes());
        req.extend_from_slice(b" HTTP/1.1\r\nHost: ");
        req.extend_from_slice(self.host.as_bytes());
        req.extend_from_slice(b"\r\nAuthorization: Bearer ");
        req.extend_from_slice(token.as_bytes());
        req.extend_from_slice(b"\r\nContent-Type: application/json\r\nContent-Length: ");
        req.extend_from_slice(body.len().to_string().as_bytes());
        req.extend_from_slice(b"\r\n\r\n");
        req.extend_from_slice(body);
        stream.write_all(&req).await?;

        self.buf.clear();
        loop {
            let mut headers = [httparse::EMPTY_HEADER; 32];
            let mut parsed = httparse::Response::new(&mut headers);
            if let httparse::Status::Complete(head_len) = parsed.parse(&self.buf).map_err(io::Error::other)? {
                let status = parsed.code.unwrap_or(0);
                let mut length = None;
                let mut close = false;
                for h in parsed.headers.iter() {
                    if h.name.eq_ignore_ascii_case("content-length") {
                        length = std::str::from_utf8(h.value).ok().and_then(|v| v.trim().parse::<usize>().ok());
                    } else if h.name.eq_ignore_ascii_case("transfer-encoding") {
                        return Err(io::Error::other("chunked responses are not expected from the service"));
                    } else if h.name.eq_ignore_ascii_case("connection") && h.value.eq_ignore_ascii_case(b"close") {
                        close = true;
                    }
                }
                let length = length.unwrap_or(0);
                while self.buf.len() < head_len + length {
                    read_more(stream, &mut self.buf).await?;
                }
                let body = self.buf[head_len..head_len + length].to_vec();
                if close {
                    self.stream = None;
                }
                return Ok(Response { status, body });
            }
            read_more(stream, &mut self.buf).await?;
        }
    }
}

async fn read_more(stream: &mut TcpStream, buf: &mut Vec<u8>) -> io::Result<()> {
    let mut chunk = [0u8; 4096];
    let n = stream.read(&mut chunk).await?;
    if n == 0 {
        return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "connection closed by the server"));
    }
    buf.extend_from_slice(&chunk[..n]);
    Ok(())
}
