// env.js - kiln's --pre-js in the WebAssembly build (packaging/wasm/
// wasm.cmake): what Emscripten 3.1.6 does to the process around kiln that a
// native program would not.
Module.preRun = Module.preRun || [];
Module.preRun.push(function () {
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
        return;
      }
      return close.apply(this, arguments);
    };
  }
});

