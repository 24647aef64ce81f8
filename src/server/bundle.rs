//! The browser bundle's files under `/pkg`: which names the pages ask for, and how they are served.
//!
//! A production build (`scripts/run.sh`) puts the bundle in a folder named by its content's hash, `pkg/<hash>/`:
//! the main module (`docnum.js`, `docnum_bg.wasm`), the chunk of each page loaded when first visited, the chunks'
//! loader and the stylesheet. The chunks, the loader and the main module name each other as they are, so one name for
//! the folder is what keeps them together. The build writes `dir: <hash>` into `hash.txt` next to the server
//! executable; the server then serves `/pkg/<hash>/` with every file cached for a year as `immutable`, and points
//! Leptos' `HydrationScripts` there with the plain names. A build by cargo-leptos writes `js: <hash>`, `wasm: <hash>`,
//! `css: <hash>` lines instead (files `docnum.<hash>.js|wasm|css`), read as Leptos reads them. A debug build
//! (`scripts/run.sh --dev`, some tests) writes no hash file and keeps the plain names under `/pkg`, `no-cache`.
//!
//! `/pkg` is served by tower-http's `ServeDir` with the `.br` / `.gz` files the build wrote beside each file:
//! a browser that accepts brotli gets `Content-Encoding: br`.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::header::{self, HeaderValue};
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::Response;
use axum::Router;
use leptos::config::LeptosOptions;
use tower_http::services::ServeDir;

use crate::contract::staff_page;

/// What a hashed file gets: a year, never revalidated.
pub(crate) const IMMUTABLE: &str = "public, max-age=31536000, immutable";
/// What every other file under `/pkg` gets: use it only after asking whether it changed.
pub(crate) const NO_CACHE: &str = "no-cache";

/// The bundle the server hands out (see the module documentation).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Bundle {
    /// The stylesheet's address: `/pkg/docnum.<hash>.css`, or `/pkg/docnum.css` without hashing.
    pub(crate) css_href: Arc<str>,
    /// The file names under `/pkg` that carry their content's hash: served `immutable`.
    hashed: HashSet<String>,
    /// The folder under `/pkg` named by the whole bundle's hash, when the build wrote one: all of it `immutable`.
    dir: Option<String>,
    /// The staff script's files without their endings (`/pkg/<hash>/staff`), when the build made it: the recipe of
    /// `scripts/lib.sh` does; cargo-leptos does not, and the reserve page then works as it does without scripts.
    pub(crate) staff_script: Option<Arc<str>>,
}

impl Bundle {
    /// The plain names of a build without hashing.
    pub(crate) fn plain(options: &LeptosOptions) -> Bundle {
        Bundle {
            css_href: format!("/{}/{}.css", pkg_dir(options), options.output_name).into(),
            hashed: HashSet::new(),
            dir: None,
            staff_script: Some(format!("/{}/{}", pkg_dir(options), staff_page::SCRIPT_NAME).into()),
        }
    }

    /// The names of a hash file's contents (`dir: …`, or `js: …`, `wasm: …`, `css: …`; other lines are ignored).
    pub(crate) fn from_hash_file(text: &str, options: &LeptosOptions) -> Bundle {
        let name = &options.output_name;
        let mut bundle = Bundle::plain(options);
        for (kind, hash) in text.lines().filter_map(|l| l.split_once(':')).map(|(k, v)| (k.trim(), v.trim())) {
            if hash.is_empty() || !hash.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') {
                continue;
            }
            let file = match kind {
                "dir" => {
                    bundle.css_href = format!("/{}/{hash}/{name}.css", pkg_dir(options)).into();
                    bundle.staff_script = Some(format!("/{}/{hash}/{}", pkg_dir(options), staff_page::SCRIPT_NAME).into());
                    bundle.dir = Some(hash.to_string());
                    continue;
                }
                "js" | "wasm" | "css" => {
                    // a build of cargo-leptos: no staff script
                    bundle.staff_script = None;
                    format!("{name}.{hash}.{kind}")
                }
                _ => continue,
            };
            if kind == "css" {
                bundle.css_href = format!("/{}/{file}", pkg_dir(options)).into();
            }
            bundle.hashed.insert(file);
        }
        bundle
    }

    /// The bundle of this build. With `hash-files` on and the hash file next to the executable (where
    /// `HydrationScripts` looks for it), its names; otherwise the plain names, and hashing is turned off in
    /// `options` so that the hydration script asks for those too.
    pub(crate) fn load(options: &mut LeptosOptions) -> Bundle {
        if !options.hash_files {
            return Bundle::plain(options);
        }
        let path = hash_file_path(options);
        match path.as_deref().map(std::fs::read_to_string) {
            Some(Ok(text)) => {
                let bundle = Bundle::from_hash_file(&text, options);
                if let Some(dir) = &bundle.dir {
                    // the plain names, in the bundle's folder: for the hydration script, the chunks' manifest
                    // (Leptos reads it under the site's pkg folder) and the files' route alike
                    options.site_pkg_dir = format!("{}/{dir}", pkg_dir(options)).into();
                    options.hash_files = false;
                }
                tracing::info!(hash_file = %path.unwrap_or_default().display(), stylesheet = %bundle.css_href, "bundle with hashed file names");
                bundle
            }
            _ => {
                tracing::info!(
                    hash_file = %path.unwrap_or_default().display(),
                    "no hash file next to the executable (a debug build): the bundle's plain file names"
                );
                options.hash_files = false;
                Bundle::plain(options)
            }
        }
    }

    /// Whether `file` (a name under the bundle's route) carries its content's hash, or lies in a folder that does.
    pub(crate) fn is_hashed(&self, file: &str) -> bool {
        self.dir.is_some() || self.hashed.contains(file)
    }
}

/// Where Leptos reads the hash file: beside the running executable.
pub(crate) fn hash_file_path(options: &LeptosOptions) -> Option<PathBuf> {
    Some(std::env::current_exe().ok()?.parent()?.join(&*options.hash_file))
}

fn pkg_dir(options: &LeptosOptions) -> &str {
    options.site_pkg_dir.trim_matches('/')
}

/// The route of the bundle's files: `/pkg`, or `/pkg/<hash>` for a bundle in a folder of its own.
pub(crate) fn route(options: &LeptosOptions) -> String {
    format!("/{}", pkg_dir(options))
}

/// `<site-root>/<site-pkg-dir>` served with its precompressed variants and the cache headers of `bundle`.
pub(crate) fn service(options: &LeptosOptions, bundle: Arc<Bundle>) -> Router {
    let dir = Path::new(&*options.site_root).join(pkg_dir(options));
    Router::new()
        .fallback_service(ServeDir::new(dir).precompressed_br().precompressed_gzip())
        .layer(axum::middleware::from_fn_with_state(bundle, cache_headers))
}

/// `Cache-Control` by name (see the module documentation), and `Vary: Accept-Encoding`: the same address
/// answers brotli, gzip or identity by what the browser accepts.
async fn cache_headers(State(bundle): State<Arc<Bundle>>, req: Request, next: Next) -> Response {
    let hashed = req.uri().path().rsplit('/').next().is_some_and(|file| bundle.is_hashed(file));
    let mut response = next.run(req).await;
    let ok = response.status().is_success() || response.status() == StatusCode::NOT_MODIFIED;
    let headers = response.headers_mut();
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static(if hashed && ok { IMMUTABLE } else { NO_CACHE }));
    if ok {
        headers.insert(header::VARY, HeaderValue::from_static("accept-encoding"));
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::body::Body;
    use tower::ServiceExt;

    fn options(site_root: &str, hash_files: bool) -> LeptosOptions {
        LeptosOptions::builder().output_name("docnum").site_root(site_root).site_pkg_dir("pkg").hash_files(hash_files).build()
    }

    #[test]
    fn hash_file_names_the_three_files() {
        let o = options("target/site", true);
        let b = Bundle::from_hash_file("js: aB3_x\nwasm: 0f9e\n\ncss: c55\nsplit: zz\nbogus\n", &o);
        assert_eq!(&*b.css_href, "/pkg/docnum.c55.css");
        assert!(b.is_hashed("docnum.aB3_x.js") && b.is_hashed("docnum.0f9e.wasm") && b.is_hashed("docnum.c55.css"));
        assert!(!b.is_hashed("docnum.js") && !b.is_hashed("docnum.zz.split"));
        assert_eq!(&*Bundle::plain(&o).css_href, "/pkg/docnum.css");
        // a hash that could climb out of the directory is not a name
        assert!(Bundle::from_hash_file("css: ../x", &o).hashed.is_empty());
    }

    #[test]
    fn a_bundle_in_a_folder_of_its_own_is_served_from_there_with_the_plain_names() {
        let o = options("target/site", true);
        let b = Bundle::from_hash_file("dir: 0123abcd\n", &o);
        assert_eq!(&*b.css_href, "/pkg/0123abcd/docnum.css");
        assert!(b.is_hashed("docnum_bg.wasm") && b.is_hashed("__wasm_split.______________________.js"));
        assert!(Bundle::from_hash_file("dir: ../up", &o).dir.is_none());

        let dir = tempfile::tempdir().unwrap();
        let mut o = options("target/site", true);
        o.hash_file = dir.path().join("hash.txt").to_str().unwrap().into();
        std::fs::write(dir.path().join("hash.txt"), "dir: 0123abcd\n").unwrap();
        let b = Bundle::load(&mut o);
        assert_eq!((&*o.site_pkg_dir, o.hash_files, route(&o)), ("pkg/0123abcd", false, "/pkg/0123abcd".to_string()));
        assert_eq!(&*b.css_href, "/pkg/0123abcd/docnum.css");
    }

    #[test]
    fn without_a_hash_file_hashing_is_turned_off() {
        // the test executable's directory holds no hash file
        let mut o = options("target/site", true);
        o.hash_file = "no-such-hash-file-for-docnum-tests.txt".into();
        assert_eq!(Bundle::load(&mut o), Bundle::plain(&o));
        assert!(!o.hash_files);
    }

    async fn get(router: &Router, path: &str, accept_encoding: &str) -> Response {
        let req = Request::builder().uri(path).header(header::ACCEPT_ENCODING, accept_encoding).body(Body::empty()).unwrap();
        router.clone().oneshot(req).await.unwrap()
    }

    fn header_of(r: &Response, name: header::HeaderName) -> &str {
        r.headers().get(name).map(|v| v.to_str().unwrap()).unwrap_or("")
    }

    #[tokio::test]
    async fn serves_precompressed_files_with_cache_headers() {
        let site = tempfile::tempdir().unwrap();
        let pkg = site.path().join("pkg");
        std::fs::create_dir(&pkg).unwrap();
        for (name, body) in [("docnum.h1.wasm", "w"), ("docnum.h1.wasm.br", "b"), ("docnum.h1.wasm.gz", "g"), ("plain.txt", "p")] {
            std::fs::write(pkg.join(name), body).unwrap();
        }
        let o = options(site.path().to_str().unwrap(), true);
        let router = Router::new().nest_service("/pkg", service(&o, Arc::new(Bundle::from_hash_file("wasm: h1", &o))));

        let br = get(&router, "/pkg/docnum.h1.wasm", "gzip, deflate, br").await;
        assert_eq!(br.status(), StatusCode::OK);
        assert_eq!(header_of(&br, header::CONTENT_ENCODING), "br");
        assert_eq!(header_of(&br, header::CONTENT_TYPE), "application/wasm");
        assert_eq!(header_of(&br, header::CACHE_CONTROL), IMMUTABLE);
        assert_eq!(header_of(&br, header::VARY), "accept-encoding");
        let gz = get(&router, "/pkg/docnum.h1.wasm", "gzip").await;
        assert_eq!(header_of(&gz, header::CONTENT_ENCODING), "gzip");
        let identity = get(&router, "/pkg/docnum.h1.wasm", "identity").await;
        assert_eq!(header_of(&identity, header::CONTENT_ENCODING), "");
        assert_eq!(axum::body::to_bytes(identity.into_body(), 10).await.unwrap(), "w");

        let plain = get(&router, "/pkg/plain.txt", "br").await;
        assert_eq!((plain.status(), header_of(&plain, header::CACHE_CONTROL)), (StatusCode::OK, NO_CACHE));
        let missing = get(&router, "/pkg/docnum.h2.wasm", "br").await;
        assert_eq!((missing.status(), header_of(&missing, header::CACHE_CONTROL)), (StatusCode::NOT_FOUND, NO_CACHE));
    }
}
