//! SQLite's WAL written in a few large calls per commit: the `unix` VFS with a WAL file that gathers a commit's frames.
//!
//! SQLite writes each WAL frame with two calls, its 24-byte header and then the page. A spread group of 31 numbers
//! dirties about 165 pages, so its commit made some 330 `pwrite`s before the fsync, and those were most of SQLite's
//! system time per number (docs/benchmarks/sqlite-write-path.md). Here the WAL file keeps a run of contiguous writes in memory and
//! hands it to the real file in writes of up to 128 KiB as soon as the commit frame is complete, or before anything else touches
//! the file (a read, a sync, its size, a truncation, a write elsewhere, closing). Every other file, the database
//! itself included, is the `unix` VFS's own, untouched.
//!
//! Why it is safe: the frames held are always those of a commit in progress. The connections that use this VFS do
//! not spill pages in the middle of a transaction (`PRAGMA cache_spill = OFF`, set with it in `Db::connect`), so
//! SQLite writes WAL frames only while committing, in one ascending run that ends with the commit frame. That run
//! reaches the file before the commit's fsync and before the wal-index names its frames, as it did before; no other
//! connection can see, or write over, frames this one still holds. An error of the deferred write comes back from
//! the write of the commit frame's page, so the commit fails as a failed write would have failed it.

use std::ffi::{c_int, c_void, CStr};
use std::ptr;
use std::sync::atomic::{AtomicPtr, Ordering};
use std::sync::OnceLock;

use libsqlite3_sys::{
    sqlite3_file, sqlite3_filename, sqlite3_int64, sqlite3_io_methods, sqlite3_vfs, sqlite3_vfs_find, sqlite3_vfs_register, SQLITE_IOERR, SQLITE_OK,
    SQLITE_OPEN_WAL,
};

/// The name to open a connection with (`SqliteConnectOptions::vfs`, or `vfs=` in the URL).
pub(crate) const VFS_NAME: &str = "docnum-unix";
const VFS_NAME_C: &CStr = c"docnum-unix";

/// A WAL frame header's size; a write of exactly this size to a WAL file is one (the file's own header is 32 bytes).
const FRAME_HEADER: usize = 24;
/// The most the `unix` VFS writes in one call (its `seekAndWriteFd` keeps 17 bits of the length).
const MOST_PER_WRITE: usize = 0x1_ffff;
/// Past this much held, the run is written out anyway (a large import's commit); order is kept either way.
const MOST_HELD: usize = 8 << 20;

/// The `unix` VFS this one wraps.
static UNIX: AtomicPtr<sqlite3_vfs> = AtomicPtr::new(ptr::null_mut());

/// Registers the VFS once per process (not as the default). Connections opened with it must also run
/// `PRAGMA cache_spill = OFF` (see the module's comment).
pub(crate) fn register() -> Result<(), String> {
    static REGISTERED: OnceLock<Result<(), String>> = OnceLock::new();
    REGISTERED
        .get_or_init(|| unsafe {
            let unix = sqlite3_vfs_find(c"unix".as_ptr());
            if unix.is_null() {
                return Err("SQLite has no `unix` VFS".into());
            }
            UNIX.store(unix, Ordering::Release);
            let mut ours: sqlite3_vfs = *unix;
            ours.zName = VFS_NAME_C.as_ptr();
            ours.pNext = ptr::null_mut();
            ours.szOsFile = (REAL_AT as c_int) + (*unix).szOsFile;
            ours.xOpen = Some(open);
            // SQLite keeps the pointer in its list of VFSes for the life of the process
            match sqlite3_vfs_register(Box::leak(Box::new(ours)), 0) {
                SQLITE_OK => Ok(()),
                rc => Err(format!("registering the {VFS_NAME} VFS failed: SQLite error {rc}")),
            }
        })
        .clone()
}

/// A WAL file: SQLite's file object first (its methods are ours), then the run held, then the `unix` file itself.
#[repr(C)]
struct WalFile {
    base: sqlite3_file,
    real: *mut sqlite3_file,
    /// The file offset of `held[0]`.
    held_at: sqlite3_int64,
    held: Vec<u8>,
    /// The last write was a commit frame's header: its page completes the commit.
    commit_page_next: bool,
}

/// Where the `unix` file object starts inside the allocation SQLite gives a WAL file (8-byte aligned).
const REAL_AT: usize = std::mem::size_of::<WalFile>().next_multiple_of(8);

unsafe extern "C" fn open(_vfs: *mut sqlite3_vfs, name: sqlite3_filename, file: *mut sqlite3_file, flags: c_int, out_flags: *mut c_int) -> c_int {
    let unix = UNIX.load(Ordering::Acquire);
    let Some(unix_open) = (*unix).xOpen else { return SQLITE_IOERR };
    if flags & SQLITE_OPEN_WAL == 0 {
        // the unix file fills the allocation from its start, with its own methods: nothing of ours in the way
        return unix_open(unix, name, file, flags, out_flags);
    }
    let real = file.cast::<u8>().add(REAL_AT).cast::<sqlite3_file>();
    let rc = unix_open(unix, name, real, flags, out_flags);
    if rc != SQLITE_OK {
        // SQLite closes a file only if its methods are set
        (*file).pMethods = ptr::null();
        return rc;
    }
    file.cast::<WalFile>().write(WalFile {
        base: sqlite3_file { pMethods: &WAL_METHODS },
        real,
        held_at: 0,
        held: Vec::new(),
        commit_page_next: false,
    });
    SQLITE_OK
}

impl WalFile {
    unsafe fn from<'a>(file: *mut sqlite3_file) -> &'a mut WalFile {
        &mut *file.cast::<WalFile>()
    }

    unsafe fn methods(&self) -> &sqlite3_io_methods {
        &*(*self.real).pMethods
    }

    /// Writes the run held, in calls of up to 128 KiB, and forgets it whatever the outcome (SQLite fails the commit on an error).
    unsafe fn write_held(&mut self) -> c_int {
        if self.held.is_empty() {
            return SQLITE_OK;
        }
        let Some(write) = self.methods().xWrite else { return SQLITE_IOERR };
        let mut rc = SQLITE_OK;
        let mut at = self.held_at;
        for chunk in self.held.chunks(MOST_PER_WRITE) {
            rc = write(self.real, chunk.as_ptr().cast(), chunk.len() as c_int, at);
            if rc != SQLITE_OK {
                break;
            }
            at += chunk.len() as sqlite3_int64;
        }
        self.held.clear();
        if self.held.capacity() > MOST_HELD {
            self.held.shrink_to(MOST_HELD);
        }
        rc
    }
}

unsafe extern "C" fn wal_write(file: *mut sqlite3_file, data: *const c_void, amount: c_int, offset: sqlite3_int64) -> c_int {
    let wal = WalFile::from(file);
    let Ok(len @ 1..) = usize::try_from(amount) else { return if amount == 0 { SQLITE_OK } else { SQLITE_IOERR } };
    let bytes = std::slice::from_raw_parts(data.cast::<u8>(), len);
    let held_end = wal.held_at + wal.held.len() as sqlite3_int64;
    if !wal.held.is_empty() && (offset != held_end || wal.held.len() + len > MOST_HELD) {
        let rc = wal.write_held();
        if rc != SQLITE_OK {
            return rc;
        }
    }
    if wal.held.is_empty() {
        wal.held_at = offset;
    }
    wal.held.extend_from_slice(bytes);
    if wal.commit_page_next {
        wal.commit_page_next = false;
        return wal.write_held();
    }
    // bytes 4..8 of a frame header: the database's size in pages after a commit, zero in any other frame
    wal.commit_page_next = len == FRAME_HEADER && bytes[4..8] != [0, 0, 0, 0];
    SQLITE_OK
}

/// The methods that read or change the file as a whole: the run held goes first.
macro_rules! after_held {
    ($name:ident, $method:ident, ($($arg:ident: $ty:ty),*)) => {
        unsafe extern "C" fn $name(file: *mut sqlite3_file $(, $arg: $ty)*) -> c_int {
            let wal = WalFile::from(file);
            let rc = wal.write_held();
            if rc != SQLITE_OK {
                return rc;
            }
            match wal.methods().$method {
                Some(method) => method(wal.real $(, $arg)*),
                None => SQLITE_IOERR,
            }
        }
    };
}
after_held!(wal_read, xRead, (data: *mut c_void, amount: c_int, offset: sqlite3_int64));
after_held!(wal_truncate, xTruncate, (size: sqlite3_int64));
after_held!(wal_sync, xSync, (flags: c_int));
after_held!(wal_file_size, xFileSize, (size: *mut sqlite3_int64));
after_held!(wal_file_control, xFileControl, (op: c_int, arg: *mut c_void));

/// The methods that leave the file's bytes alone, passed through.
macro_rules! passed_through {
    ($name:ident, $method:ident, ($($arg:ident: $ty:ty),*), $otherwise:expr) => {
        unsafe extern "C" fn $name(file: *mut sqlite3_file $(, $arg: $ty)*) -> c_int {
            let wal = WalFile::from(file);
            match wal.methods().$method {
                Some(method) => method(wal.real $(, $arg)*),
                _ => $otherwise,
            }
        }
    };
}
passed_through!(wal_lock, xLock, (level: c_int), SQLITE_OK);
passed_through!(wal_unlock, xUnlock, (level: c_int), SQLITE_OK);
passed_through!(wal_check_reserved_lock, xCheckReservedLock, (out: *mut c_int), SQLITE_IOERR);
passed_through!(wal_sector_size, xSectorSize, (), 4096);
passed_through!(wal_device_characteristics, xDeviceCharacteristics, (), 0);
passed_through!(wal_shm_map, xShmMap, (region: c_int, size: c_int, extend: c_int, out: *mut *mut c_void), SQLITE_IOERR);
passed_through!(wal_shm_lock, xShmLock, (offset: c_int, n: c_int, flags: c_int), SQLITE_IOERR);
passed_through!(wal_shm_unmap, xShmUnmap, (delete: c_int), SQLITE_OK);
passed_through!(wal_unfetch, xUnfetch, (offset: sqlite3_int64, p: *mut c_void), SQLITE_OK);

unsafe extern "C" fn wal_fetch(_file: *mut sqlite3_file, _offset: sqlite3_int64, _amount: c_int, out: *mut *mut c_void) -> c_int {
    // a mapping would read around the run held; SQLite maps only database files, and reads this one otherwise
    *out = ptr::null_mut();
    SQLITE_OK
}

unsafe extern "C" fn wal_shm_barrier(file: *mut sqlite3_file) {
    let wal = WalFile::from(file);
    if let Some(barrier) = wal.methods().xShmBarrier {
        barrier(wal.real)
    }
}

unsafe extern "C" fn wal_close(file: *mut sqlite3_file) -> c_int {
    let wal = WalFile::from(file);
    let written = wal.write_held();
    let closed = match wal.methods().xClose {
        Some(close) => close(wal.real),
        None => SQLITE_OK,
    };
    ptr::drop_in_place(&mut wal.held);
    (*file).pMethods = ptr::null();
    if written != SQLITE_OK {
        written
    } else {
        closed
    }
}

static WAL_METHODS: sqlite3_io_methods = sqlite3_io_methods {
    iVersion: 3,
    xClose: Some(wal_close),
    xRead: Some(wal_read),
    xWrite: Some(wal_write),
    xTruncate: Some(wal_truncate),
    xSync: Some(wal_sync),
    xFileSize: Some(wal_file_size),
    xLock: Some(wal_lock),
    xUnlock: Some(wal_unlock),
    xCheckReservedLock: Some(wal_check_reserved_lock),
    xFileControl: Some(wal_file_control),
    xSectorSize: Some(wal_sector_size),
    xDeviceCharacteristics: Some(wal_device_characteristics),
    xShmMap: Some(wal_shm_map),
    xShmLock: Some(wal_shm_lock),
    xShmBarrier: Some(wal_shm_barrier),
    xShmUnmap: Some(wal_shm_unmap),
    xFetch: Some(wal_fetch),
    xUnfetch: Some(wal_unfetch),
};

#[cfg(test)]
mod tests {
    use super::*;
    use libsqlite3_sys::{
        sqlite3, sqlite3_close, sqlite3_column_text, sqlite3_exec, sqlite3_finalize, sqlite3_open_v2, sqlite3_prepare_v2, sqlite3_step,
        SQLITE_OPEN_CREATE, SQLITE_OPEN_READWRITE, SQLITE_ROW,
    };
    use std::ffi::CString;
    use std::path::Path;

    /// A connection of SQLite's own C interface, on the test's thread (so `/proc/thread-self/io` sees its writes).
    struct Conn(*mut sqlite3);

    impl Conn {
        fn open(path: &Path, vfs: &CStr) -> Conn {
            register().unwrap();
            let path = CString::new(path.to_str().unwrap()).unwrap();
            let mut db = ptr::null_mut();
            let rc = unsafe { sqlite3_open_v2(path.as_ptr(), &mut db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, vfs.as_ptr()) };
            assert_eq!(rc, SQLITE_OK, "open");
            let conn = Conn(db);
            conn.exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; PRAGMA cache_spill = OFF; PRAGMA wal_autocheckpoint = 0; PRAGMA temp_store = MEMORY;");
            conn
        }

        fn exec(&self, sql: &str) {
            let sql = CString::new(sql).unwrap();
            let rc = unsafe { sqlite3_exec(self.0, sql.as_ptr(), None, ptr::null_mut(), ptr::null_mut()) };
            assert_eq!(rc, SQLITE_OK, "{sql:?}");
        }

        fn text(&self, sql: &str) -> String {
            let sql = CString::new(sql).unwrap();
            unsafe {
                let mut statement = ptr::null_mut();
                assert_eq!(sqlite3_prepare_v2(self.0, sql.as_ptr(), -1, &mut statement, ptr::null_mut()), SQLITE_OK);
                assert_eq!(sqlite3_step(statement), SQLITE_ROW);
                let value = CStr::from_ptr(sqlite3_column_text(statement, 0).cast()).to_string_lossy().into_owned();
                sqlite3_finalize(statement);
                value
            }
        }
    }

    impl Drop for Conn {
        fn drop(&mut self) {
            unsafe { sqlite3_close(self.0) };
        }
    }

    /// Write calls this thread has made so far.
    fn writes_by_this_thread() -> u64 {
        let io = std::fs::read_to_string("/proc/thread-self/io").unwrap();
        io.lines().find_map(|line| line.strip_prefix("syscw: ")).unwrap().trim().parse().unwrap()
    }

    /// A table whose index puts 200 new rows on pages all over the file, as spread numbers do.
    fn spread_rows(from: u32) -> String {
        format!(
            "BEGIN; WITH {} INSERT INTO t (k, v) SELECT printf('%08x', (value * 2654435761) % 4294967291), randomblob(40) \
             FROM s; COMMIT;",
            series(from, from + 199)
        )
    }

    /// `s(value)`: the integers `from..=to`.
    fn series(from: u32, to: u32) -> String {
        format!("RECURSIVE s(value) AS (SELECT {from} UNION ALL SELECT value + 1 FROM s WHERE value < {to})")
    }

    fn commit_of_spread_rows(vfs: &CStr) -> (u64, u64) {
        let dir = tempfile::tempdir().unwrap();
        let conn = Conn::open(&dir.path().join("t.db"), vfs);
        conn.exec("CREATE TABLE t (id INTEGER PRIMARY KEY, k TEXT NOT NULL, v BLOB); CREATE INDEX t_k ON t (k);");
        for from in (0..20_000).step_by(200) {
            conn.exec(&spread_rows(from));
        }
        conn.exec("PRAGMA wal_checkpoint(TRUNCATE)");
        let wal = dir.path().join("t.db-wal");
        let before = writes_by_this_thread();
        conn.exec(&spread_rows(50_000));
        let writes = writes_by_this_thread() - before;
        let frames = std::fs::metadata(&wal).unwrap().len().saturating_sub(32) / (4096 + FRAME_HEADER as u64);
        (writes, frames)
    }

    #[test]
    fn a_commit_reaches_the_wal_in_few_large_writes() {
        let (writes, frames) = commit_of_spread_rows(VFS_NAME_C);
        assert!(frames >= 50, "the commit touched {frames} pages");
        // in calls of at most 128 KiB, the unix VFS's largest
        let calls = (frames * (4096 + FRAME_HEADER as u64)).div_ceil(MOST_PER_WRITE as u64) + 1; // and the header
        assert!(writes <= calls, "{writes} writes for {frames} frames");
        // the same commit on the plain unix VFS: two calls per frame
        let (writes, frames) = commit_of_spread_rows(c"unix");
        assert!(frames >= 50 && writes >= 2 * frames, "{writes} writes for {frames} frames");
    }

    #[test]
    fn a_commit_larger_than_what_is_held_at_once_is_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.db");
        {
            let conn = Conn::open(&path, VFS_NAME_C);
            // some 14 MiB of pages in one commit: the run held is written out on the way, past `MOST_HELD`
            conn.exec(&format!(
                "CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT); BEGIN; WITH {} INSERT INTO t (v) SELECT printf('%.3000c', 'x') FROM s; COMMIT;",
                series(1, 4000)
            ));
            let wal = std::fs::metadata(dir.path().join("t.db-wal")).unwrap().len();
            assert!(wal > MOST_HELD as u64, "the WAL holds {wal} bytes");
        }
        let reader = Conn::open(&path, c"unix");
        assert_eq!(reader.text("PRAGMA integrity_check"), "ok");
        assert_eq!(reader.text("SELECT count(*) || ' ' || sum(length(v)) FROM t"), "4000 12000000");
    }

    #[test]
    /// The case that `PRAGMA cache_spill = OFF` rules out. With spilling on (as this test once ran, to see it fail), A
    /// held the spilled frames of its rolled-back transaction, wrote them out over B's later commit at its next write,
    /// and got SQLITE_CORRUPT.
    fn a_rolled_back_transaction_larger_than_the_cache_costs_no_later_commit() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.db");
        {
            let a = Conn::open(&path, VFS_NAME_C);
            // with no page in the WAL, undoing A's transaction reads nothing from it (a read would write out what A holds)
            a.exec("CREATE TABLE t (id INTEGER PRIMARY KEY, v BLOB); PRAGMA cache_size = 10; PRAGMA wal_checkpoint(TRUNCATE);");
            let b = Conn::open(&path, VFS_NAME_C);
            // some 80 pages, far more than A's cache holds, then thrown away
            a.exec(&format!("BEGIN; WITH {} INSERT INTO t (v) SELECT replace(hex(zeroblob(500)), '0', 'a') FROM s; ROLLBACK;", series(1, 300)));
            // B's commit fills the WAL past where A's transaction reached
            b.exec(&format!("WITH {} INSERT INTO t (v) SELECT hex(zeroblob(500)) FROM s;", series(1, 3000)));
            a.exec("INSERT INTO t (v) VALUES ('1');");
            b.exec("INSERT INTO t (v) VALUES ('2');");
        }
        // read back through the plain unix VFS, after the last close copied the WAL into the file
        let reader = Conn::open(&path, c"unix");
        assert_eq!(reader.text("PRAGMA integrity_check"), "ok");
        assert_eq!(reader.text("SELECT count(*) FROM t"), "3002");
        assert_eq!(reader.text("SELECT count(*) FROM t WHERE v LIKE 'a%'"), "0", "rows of the rolled-back transaction");
    }
}
