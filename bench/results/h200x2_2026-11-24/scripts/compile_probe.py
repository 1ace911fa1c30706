"""NVRTC compile throughput on this host: threads of one process or separate
processes, T at once, over the flattened sources in DIR (round robin).
  python3 compile_probe.py DIR threads|procs T COUNT
Prints compiles per second and the mean seconds of one compile (wall)."""
import ctypes, glob, os, sys, time, threading, multiprocessing as mp

OPTS = [b"--gpu-architecture=sm_90", b"--std=c++17", b"--device-as-default-execution-space", b"-lineinfo"]

def lib():
    return ctypes.CDLL("/usr/local/cuda/lib64/libnvrtc.so")

def compile_one(nv, src):
    prog = ctypes.c_void_p()
    assert nv.nvrtcCreateProgram(ctypes.byref(prog), src, b"k.cu", 0, None, None) == 0
    arr = (ctypes.c_char_p * len(OPTS))(*OPTS)
    t = time.time()
    r = nv.nvrtcCompileProgram(prog, len(OPTS), arr)
    dt = time.time() - t
    nv.nvrtcDestroyProgram(ctypes.byref(prog))
    assert r == 0, r
    return dt

def worker(srcs, idx, out):
    nv = lib()
    tot = 0.0
    for i in idx:
        tot += compile_one(nv, srcs[i % len(srcs)])
    out.append(tot) if isinstance(out, list) else out.put(tot)

def main():
    d, mode, T, count = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    srcs = [open(f, "rb").read() for f in sorted(glob.glob(d + "/*.cu"))]
    parts = [list(range(w, count, T)) for w in range(T)]
    t0 = time.time()
    if mode == "threads":
        out = []
        ths = [threading.Thread(target=worker, args=(srcs, p, out)) for p in parts]
        [t.start() for t in ths]; [t.join() for t in ths]
        sums = out
    else:
        q = mp.get_context("fork").Queue()
        ps = [mp.get_context("fork").Process(target=worker, args=(srcs, p, q)) for p in parts]
        [p.start() for p in ps]
        sums = [q.get() for _ in ps]
        [p.join() for p in ps]
    wall = time.time() - t0
    print(f"{mode:8s} T={T:2d} {count} compiles in {wall:6.2f} s: {count / wall:6.1f}/s, "
          f"one compile {sum(sums) / count:.3f} s  [{os.environ.get('LD_PRELOAD', '').split('/')[-1] or 'glibc'}"
          f"{' ' + os.environ['GLIBC_TUNABLES'] if 'GLIBC_TUNABLES' in os.environ else ''}]", flush=True)

if __name__ == "__main__":
    main()
