// host.js - the JavaScript half of lib/host.c, the WebAssembly kiln's
// platform layer: kiln's --pre-js (packaging/wasm/wasm.cmake), so that its
// functions are in the scope of the program's JavaScript (Emscripten 3.1.6's
// FS, SYSCALLS, ERRNO_CODES, HEAP*) and of host.c's EM_JS calls.  What each
// does, and why, is said in host.c above the EM_JS that calls it; they run
// on the main thread (host.c's on_main()), return 0 or a result, or -errno.
// Below them, what Emscripten does to the process that a native program
// would not, set right before main() runs.

// Another thread may have grown the memory since this one last looked.
function kilnMem() {
  if (wasmMemory.buffer != buffer) {
    updateGlobalBufferAndViews(wasmMemory.buffer);
  }
}

// The path of the C string PATH relative to the descriptor DIRFD.
function kilnPath(dirfd, path) {
  kilnMem();
  return SYSCALLS.calculateAt(dirfd, UTF8ToString(path));
}

// The -errno of an exception of Emscripten's or of Node's.
function kilnErr(e) {
  if (e instanceof FS.ErrnoError) {
    return -e.errno;
  }
  if (!e || !e.code) {
    throw e;
  }
  return -(ERRNO_CODES[e.code] || ERRNO_CODES.EIO);
}

// lib/host.h's KILN_HOST_* bits of this platform.
function kilnFlags() {
  return process.platform === 'win32' ? 3 : process.platform === 'darwin' ? 2 : 0;
}

// "VERSION, WebAssembly, Node.js vX.Y.Z", malloc'ed.
function kilnNodeVersion(version) {
  kilnMem();
  const s = `${UTF8ToString(version)}, WebAssembly, Node.js ${process.version}`;
  const n = lengthBytesUTF8(s) + 1;
  const p = _malloc(n);
  if (p) {
    stringToUTF8(s, p, n);
  }
  return p;
}

// PATH (relative to DIRFD; DIRFD itself when EMPTY and PATH is "")
// stat'ed, a last link followed unless NOFOLLOW, into OUT: dev, ino (each
// two 32-bit halves, low first), mode, nlink, uid, gid, rdev, size (two
// halves), blocks, then atime, mtime, ctime each as seconds (two halves)
// and nanoseconds.
function kilnStat(dirfd, path, empty, nofollow, out) {
  const fs = require('fs');
  let st;
  try {
    kilnMem();
    if (empty && !HEAPU8[path]) {
      const s = FS.getStream(dirfd);
      if (!s) {
        return -ERRNO_CODES.EBADF;
      }
      st = s.kilnDir ? fs.statSync(s.path, { bigint: true })
        : fs.fstatSync(s.nfd, { bigint: true });
    } else {
      st = (nofollow ? fs.lstatSync : fs.statSync)(kilnPath(dirfd, path), { bigint: true });
    }
  } catch (e) {
    return kilnErr(e);
  }
  kilnMem();
  const u = HEAPU32;
  const g = BigInt(1000000000);
  let i = out >> 2;
  const put64 = (v) => {
    v = BigInt.asUintN(64, v);
    u[i++] = Number(v & BigInt(0xffffffff));
    u[i++] = Number(v >> BigInt(32));
  };
  const time = (ns) => {
    let s = ns / g;
    let r = ns % g;
    if (r < BigInt(0)) {
      s -= BigInt(1);
      r += g;
    }
    put64(s);
    u[i++] = Number(r);
  };
  put64(st.dev);
  put64(st.ino);
  for (const v of [st.mode, st.nlink, st.uid, st.gid, st.rdev]) {
    u[i++] = Number(v);
  }
  put64(st.size);
  u[i++] = Number(st.blocks);
  time(st.atimeNs);
  time(st.mtimeNs);
  time(st.ctimeNs);
  return 0;
}

// Directories listed by kilnListed: path -> { names (a Set), ino, mtime,
// ctime (bigint ns), sure }.  A listing is trusted, for a name it holds,
// only while the directory is the same inode with the same mtime and ctime
// and was listed over a second after they last moved (a change within the
// clock tick of a listing would leave them as they were); then a name it
// does not hold is listed again (a new file, or a clash).  Listing once per
// lookup made a run's time grow with the square of a directory's size.
const kilnListings = new Map();

// OP 0: 1 when PATH (relative to DIRFD) is listed by its exact name in its
// directory, else 0.  OP 1 or 2: kiln has just created or removed PATH:
// a trusted listing of its directory gains or loses the name and takes the
// directory's new times (a change by another program between the last
// look and this one, in that directory, goes unseen: the window of a
// system call).  Only where case folds (lib/host.c's other_name()).
function kilnListed(dirfd, path, op) {
  const fs = require('fs');
  try {
    const full = kilnPath(dirfd, path);
    // '\\' separates only on Windows: elsewhere it is a byte of a name
    const cut = process.platform === 'win32'
      ? Math.max(full.lastIndexOf('/'), full.lastIndexOf('\\')) : full.lastIndexOf('/');
    const dir = cut < 0 ? '.' : cut === 0 ? '/' : full.slice(0, cut);
    const name = full.slice(cut + 1);
    const st = fs.statSync(dir, { bigint: true });
    const l = kilnListings.get(dir);
    const same = l && l.sure && l.ino === st.ino && l.mtime === st.mtimeNs && l.ctime === st.ctimeNs;
    if (op) {
      if (l && l.sure && l.ino === st.ino) {
        if (op === 1) {
          l.names.add(name);
        } else {
          l.names.delete(name);
        }
        l.mtime = st.mtimeNs;
        l.ctime = st.ctimeNs;
      }
      return 0;
    }
    if (same && l.names.has(name)) {
      return 1;
    }
    const names = new Set(fs.readdirSync(dir));
    // (no bigint literals: Emscripten 3.1.6's JavaScript tools do not parse them)
    const now = BigInt(Date.now()) * BigInt(1000000), second = BigInt(1000000000);
    kilnListings.set(dir, {
      names, ino: st.ino, mtime: st.mtimeNs, ctime: st.ctimeNs,
      sure: now - st.mtimeNs > second && now - st.ctimeNs > second,
    });
    return names.has(name) ? 1 : 0;
  } catch (e) {
    return op ? 0 : kilnErr(e);
  }
}

// A descriptor for the directory PATH (relative to DIRFD), or for the one
// SAME's stream holds (dup; -ENOTDIR when SAME is not a directory's): an
// Emscripten stream holding its path and no descriptor of Node's (Node on
// Windows opens no directory), which readdir and fstatat use by path, and
// close just forgets.
function kilnOpenDir(dirfd, path, flags, same) {
  const fs = require('fs');
  try {
    let full;
    if (same >= 0) {
      const o = FS.getStream(same);
      if (!o) {
        return -ERRNO_CODES.EBADF;
      }
      if (!o.kilnDir) {
        return -ERRNO_CODES.ENOTDIR;
      }
      full = o.path;
    } else {
      full = kilnPath(dirfd, path);
    }
    const st = fs.statSync(full);
    if (!st.isDirectory()) {
      return -ERRNO_CODES.ENOTDIR;
    }
    fs.accessSync(full, fs.constants.R_OK); // as open(2): none unreadable
    const fd = FS.nextfd();
    const ops = {
      llseek(s, offset, whence) {
        const to = whence === 1 ? s.position + offset : whence === 0 ? offset : -1;
        if (to < 0) {
          throw new FS.ErrnoError(ERRNO_CODES.EINVAL);
        }
        if (to === 0) {
          s.kilnNames = null; // rewinddir: listed again
        }
        s.position = to;
        return to;
      },
      read() {
        throw new FS.ErrnoError(ERRNO_CODES.EISDIR);
      },
      write() {
        throw new FS.ErrnoError(ERRNO_CODES.EISDIR);
      },
    };
    FS.streams[fd] = {
      fd, path: full, flags, position: 0, seekable: true, kilnDir: true, stream_ops: ops,
      node: { id: st.ino, mode: st.mode, node_ops: NODERAWFS, path: full },
    };
    return fd;
  } catch (e) {
    return kilnErr(e);
  }
}

// Up to COUNT bytes of the entries of the directory stream FD from its
// position on, as struct dirent records of SIZE bytes at DIRP, their
// fields at OFF (d_ino, d_off, d_reclen, d_type, d_name): the bytes
// written.  Node's names, as bytes, and its types.
function kilnGetdents(fd, dirp, count, size, off) {
  const s = FS.getStream(fd);
  if (!s) {
    return -ERRNO_CODES.EBADF;
  }
  if (!s.kilnDir) {
    return -ERRNO_CODES.ENOTDIR;
  }
  try {
    if (!s.kilnNames) {
      s.kilnNames = require('fs').readdirSync(s.path, { withFileTypes: true, encoding: 'buffer' });
    }
  } catch (e) {
    return kilnErr(e);
  }
  kilnMem();
  const i32 = HEAP32;
  const u8 = HEAPU8;
  const [ino, doff, reclen, type, dname] = Array.from(HEAP32.subarray(off >> 2, (off >> 2) + 5));
  let pos = 0;
  let idx = Math.floor(s.position / size);
  for (; idx < s.kilnNames.length + 2 && pos + size <= count; idx++, pos += size) {
    const at = dirp + pos;
    let name = idx === 0 ? [46] : [46, 46]; // "." and ".." first
    let t = 4;
    if (idx >= 2) {
      const d = s.kilnNames[idx - 2];
      name = d.name.length > 255 ? d.name.subarray(0, 255) : d.name;
      t = d.isFile() ? 8 : d.isDirectory() ? 4 : d.isSymbolicLink() ? 10 : d.isFIFO() ? 1 :
        d.isSocket() ? 12 : d.isCharacterDevice() ? 2 : d.isBlockDevice() ? 6 : 0;
    }
    i32[(at + ino) >> 2] = idx + 1;
    i32[(at + ino + 4) >> 2] = 0;
    i32[(at + doff) >> 2] = (idx + 1) * size;
    i32[(at + doff + 4) >> 2] = 0;
    HEAP16[(at + reclen) >> 1] = size;
    u8[at + type] = t;
    u8.set(name, at + dname);
    u8[at + dname + name.length] = 0;
  }
  s.position = idx * size;
  return pos;
}

// Set the times of FD (PATH NULL) or of PATH (relative to DIRFD; a last
// link's own with NOFOLLOW): AT and MT seconds, each with its nanoseconds.
// Node takes seconds as a number, which its libuv cuts to the microsecond:
// half a microsecond more, so that the cut cannot fall below the one meant
// where the sum is not exact.
function kilnUtimes(fd, path, nofollow, at, ans, mt, mns) {
  const fs = require('fs');
  // a half microsecond more: libuv cuts the sum to the microsecond, and
  // where the sum is not exact it must not fall below the one meant
  const a = at + (Math.floor(ans / 1000) + 0.5) / 1e6;
  const m = mt + (Math.floor(mns / 1000) + 0.5) / 1e6;
  try {
    if (path) {
      (nofollow ? fs.lutimesSync : fs.utimesSync)(kilnPath(fd, path), a, m);
      return 0;
    }
    const s = FS.getStream(fd);
    if (!s) {
      return -ERRNO_CODES.EBADF;
    }
    if (s.kilnDir) {
      fs.utimesSync(s.path, a, m);
    } else {
      fs.futimesSync(s.nfd, a, m);
    }
    return 0;
  } catch (e) {
    return kilnErr(e);
  }
}

// OP on the file of FD: 1 fsync(2) (nothing for a directory), 2 whether it
// is a terminal (0 or 1), 3 its size as a terminal into WS (rows,
// columns), for standard output and error.
function kilnFd(op, fd, ws) {
  const s = FS.getStream(fd);
  if (!s) {
    return -ERRNO_CODES.EBADF;
  }
  try {
    if (op === 1 && !s.kilnDir) {
      require('fs').fsyncSync(s.nfd);
    } else if (op === 2) {
      return !s.kilnDir && s.nfd !== undefined && require('tty').isatty(s.nfd) ? 1 : 0;
    } else if (op === 3) {
      const out = s.nfd === 1 ? process.stdout : s.nfd === 2 ? process.stderr : null;
      if (!out || !out.isTTY || !out.columns) {
        return -ERRNO_CODES.ENOTTY;
      }
      kilnMem();
      HEAPU16[ws >> 1] = out.rows;
      HEAPU16[(ws >> 1) + 1] = out.columns;
    }
    return 0;
  } catch (e) {
    return kilnErr(e);
  }
}

// A link NEWPATH (relative to NEWDIRFD) to OLD: with HARD, a hard link to
// the file OLD (relative to OLDDIRFD), else a symbolic link holding OLD.
function kilnLink(hard, olddirfd, old, newdirfd, path) {
  const fs = require('fs');
  try {
    const to = kilnPath(newdirfd, path);
    if (hard) {
      fs.linkSync(kilnPath(olddirfd, old), to);
    } else {
      fs.symlinkSync(UTF8ToString(old), to);
    }
    return 0;
  } catch (e) {
    return kilnErr(e);
  }
}

// SIG 0: from now on Node's SIGINT, SIGTERM and SIGHUP go to
// kiln_host_signal(), and end the process no more.  SIG 1, 2 or 15: end
// the process by that signal, as its default action would.
function kilnSignals(sig) {
  const numbers = { SIGHUP: 1, SIGINT: 2, SIGTERM: 15 };
  // (no destructuring in a for-of: Emscripten 3.1.6's minifier breaks it)
  for (const name of Object.keys(numbers)) {
    const n = numbers[name];
    if (!sig) {
      process.on(name, () => Module._kiln_host_signal(n));
    } else if (n === sig) {
      process.removeAllListeners(name);
      process.kill(process.pid, name);
    }
  }
}

Module.preRun = Module.preRun || [];
Module.preRun.push(() => {
  // Emscripten gives a program an environment of its own
  // (HOME=/home/web_user and the like): kiln gets the process's, as a
  // native program would (KILN_CACHE_DIR, the CI variables --shard reads).
  // (ENV exists where the program reads its environment.)
  if (typeof ENV !== 'undefined') {
    for (const name of Object.keys(ENV)) {
      delete ENV[name];
    }
    Object.assign(ENV, process.env);
  }

  // At exit Emscripten closes every descriptor, Node's standard input,
  // output and error among them: a worker thread's own descriptors may
  // then take those numbers, and Node aborts (SIGABRT, about one run in
  // 100) when it closes them, taking them for standard ones.  They are left
  // to Node.  (FS exists where the program has files.)
  if (typeof FS !== 'undefined') {
    const close = FS.close;
    FS.close = function (stream) {
      if (stream.nfd !== undefined && stream.nfd <= 2 && !stream.stream_ops) {
        FS.closeStream(stream.fd);
        return undefined;
      }
      return close.apply(this, arguments);
    };
  }
});
