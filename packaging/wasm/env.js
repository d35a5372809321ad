// env.js - kiln's --pre-js in the WebAssembly build (packaging/wasm/
// wasm.cmake): Emscripten gives a program an environment of its own
// (HOME=/home/web_user and the like); kiln gets the process's, as a native
// program would (KILN_CACHE_DIR, the CI variables --shard reads).
Module.preRun = Module.preRun || [];
Module.preRun.push(function () {
  for (const name of Object.keys(ENV)) {
    delete ENV[name];
  }
  Object.assign(ENV, process.env);
});
