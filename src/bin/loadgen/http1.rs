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
    /// The `name=value` parts of every `Set-Cookie`, joined as a `Cookie` header sends them back.
    pub cookies: String,
}

/// How the end of a response body is found.
enum Framing {
    Length(usize),
    Chunked,
    UntilClose,
}

impl Conn {
    /// `base` is `http://host:port` (no path); nothing is connected until the first request.
    pub fn new(base: &str) -> Conn {
        Conn { host: host_of(base), stream: None, buf: Vec::with_capacity(4096) }
    }

    /// Whether a connection is open (kept alive after the last answer), so worth keeping for the next request.
    pub fn is_connected(&self) -> bool {
        self.stream.is_some()
    }

    /// POSTs a JSON body with a bearer token. A broken connection is dropped (the next request reconnects)
    /// and reported as an error, like a refused one: the caller decides whether errors are expected.
    pub async fn post_json(&mut self, path: &str, token: &str, body: &[u8]) -> io::Result<Response> {
        let auth = format!("Bearer {token}");
        self.send("POST", path, &[("Authorization", &auth), ("Content-Type", "application/json")], body).await
    }

    /// GETs a page as a browser with that session cookie does (`cookie` empty: no session); the SSR answer is
    /// streamed in chunks, read to its end.
    pub async fn get_page(&mut self, path: &str, cookie: &str) -> io::Result<Response> {
        let mut headers = vec![("Accept", "text/html")];
        if !cookie.is_empty() {
            headers.push(("Cookie", cookie));
        }
        self.send("GET", path, &headers, b"").await
    }

    /// Any request; as [`Conn::post_json`], a failed one leaves no connection behind.
    pub async fn send(&mut self, method: &str, path: &str, headers: &[(&str, &str)], body: &[u8]) -> io::Result<Response> {
        let result = self.exchange(method, path, headers, body).await;
        if result.is_err() {
            self.stream = None;
        }
        result
    }

    async fn exchange(&mut self, method: &str, path: &str, headers: &[(&str, &str)], body: &[u8]) -> io::Result<Response> {
        if self.stream.is_none() {
            let s = TcpStream::connect(&self.host).await?;
            s.set_nodelay(true)?;
            self.stream = Some(s);
        }
        let stream = self.stream.as_mut().expect("connected above");
        let mut req = Vec::with_capacity(200 + body.len() + headers.iter().map(|(n, v)| n.len() + v.len() + 4).sum::<usize>());
        req.extend_from_slice(method.as_bytes());
        req.extend_from_slice(b" ");
        req.extend_from_slice(path.as_bytes());
        req.extend_from_slice(b" HTTP/1.1\r\nHost: ");
        req.extend_from_slice(self.host.as_bytes());
        for (name, value) in headers {
            req.extend_from_slice(b"\r\n");
            req.extend_from_slice(name.as_bytes());
            req.extend_from_slice(b": ");
            req.extend_from_slice(value.as_bytes());
        }
        if method != "GET" {
            req.extend_from_slice(b"\r\nContent-Length: ");
            req.extend_from_slice(body.len().to_string().as_bytes());
        }
        req.extend_from_slice(b"\r\n\r\n");
        req.extend_from_slice(body);
        stream.write_all(&req).await?;

        self.buf.clear();
        loop {
            let mut headers = [httparse::EMPTY_HEADER; 32];
            let mut parsed = httparse::Response::new(&mut headers);
            if let httparse::Status::Complete(head_len) = parsed.parse(&self.buf).map_err(io::Error::other)? {
                let status = parsed.code.unwrap_or(0);
                let mut framing = if status == 204 || status == 304 || method == "HEAD" { Framing::Length(0) } else { Framing::UntilClose };
                let mut close = false;
                let mut cookies = String::new();
                for h in parsed.headers.iter() {
                    if h.name.eq_ignore_ascii_case("content-length") {
                        let length = std::str::from_utf8(h.value).ok().and_then(|v| v.trim().parse::<usize>().ok());
                        framing = Framing::Length(length.ok_or_else(|| io::Error::other("bad content-length"))?);
                    } else if h.name.eq_ignore_ascii_case("transfer-encoding") && h.value.eq_ignore_ascii_case(b"chunked") {
                        framing = Framing::Chunked;
                    } else if h.name.eq_ignore_ascii_case("connection") && h.value.eq_ignore_ascii_case(b"close") {
                        close = true;
                    } else if h.name.eq_ignore_ascii_case("set-cookie") {
                        let pair = std::str::from_utf8(h.value).unwrap_or("").split(';').next().unwrap_or("").trim();
                        if !pair.is_empty() {
                            if !cookies.is_empty() {
                                cookies.push_str("; ");
                            }
                            cookies.push_str(pair);
                        }
                    }
                }
                self.buf.drain(..head_len);
                let body = match framing {
                    Framing::Length(length) => {
                        while self.buf.len() < length {
                            read_more(stream, &mut self.buf).await?;
                        }
                        self.buf[..length].to_vec()
                    }
                    Framing::Chunked => read_chunked(stream, &mut self.buf).await?,
                    Framing::UntilClose => {
                        close = true;
                        loop {
                            match read_more(stream, &mut self.buf).await {
                                Ok(()) => {}
                                Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => break,
                                Err(e) => return Err(e),
                            }
                        }
                        std::mem::take(&mut self.buf)
                    }
                };
                if close {
                    self.stream = None;
                }
                return Ok(Response { status, body, cookies });
            }
            read_more(stream, &mut self.buf).await?;
        }
    }
}

/// `http://host:port/…` → `host:port`.
pub fn host_of(base: &str) -> String {
    base.trim_start_matches("http://").trim_end_matches('/').to_string()
}

/// Decodes a chunked body that starts at `buf[0]`, reading as needed; trailers are skipped.
async fn read_chunked(stream: &mut TcpStream, buf: &mut Vec<u8>) -> io::Result<Vec<u8>> {
    let mut body = Vec::new();
    let mut at = 0;
    loop {
        let (size_len, size) = loop {
            match httparse::parse_chunk_size(&buf[at..]).map_err(|_| io::Error::other("bad chunk size"))? {
                httparse::Status::Complete(found) => break found,
                httparse::Status::Partial => read_more(stream, buf).await?,
            }
        };
        at += size_len;
        if size == 0 {
            // the trailer section ends with an empty line; none is sent by the service, so usually just CRLF
            loop {
                if let Some(end) = buf[at..].windows(2).position(|w| w == b"\r\n") {
                    if end == 0 {
                        return Ok(body);
                    }
                    at += end + 2;
                } else {
                    read_more(stream, buf).await?;
                }
            }
        }
        let size = usize::try_from(size).map_err(io::Error::other)?;
        while buf.len() < at + size + 2 {
            read_more(stream, buf).await?;
        }
        body.extend_from_slice(&buf[at..at + size]);
        at += size + 2;
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
