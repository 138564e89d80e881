"""hipfer's on-disk kernel cache (hipfer/_kcache.py) and the engine's use of it.

The store, its entry checks and its directory checks need no CuPy and no GPU; the
engine's compile-or-load flow is checked with CuPy importable and its compiler and
module loader replaced by fakes; the end-to-end run (compile, store, a fresh process
loads and launches without compiling) needs a GPU, and runs with the cache forced on.
"""
import json
import multiprocessing
import os
import stat
import subprocess
import sys
import textwrap
import warnings

import pytest

from hipfer import _kcache as kc

EXPRS = ("hf::k<float>", "hf::k<double>")
NAMES = ["_ZN2hf1kIfEEvPT_", "_ZN2hf1kIdEEvPT_"]
BINARY = b"\x7fELF" + bytes(range(256)) * 8
DIGEST = kc.key_digest({"source": "abc", "exprs": list(EXPRS)})


@pytest.fixture(autouse=True)
def _fresh_warnings(monkeypatch):
    monkeypatch.setattr(kc, "_warned", set())


@pytest.fixture
def root(tmp_path):
    return str(tmp_path / "cache" / "hipfer" / "kernels")


def _entry(root, arch="gfx90a", digest=DIGEST):
    return os.path.join(root, kc.arch_tag(arch), digest)


def _stored(root, arch="gfx90a"):
    store = kc.KernelStore(root, arch)
    assert store.save(DIGEST, EXPRS, NAMES, BINARY)
    return store


def _quiet_load(store, digest=DIGEST, exprs=EXPRS):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a valid entry or a plain miss: no warning
        return store.load(digest, exprs)


# ---------------------------------------------------------------- configuration
def test_mode_from_the_environment(monkeypatch):
    for value, want in (("", "auto"), ("auto", "auto"), ("ON", "on"), ("1", "on"),
                        ("off", "off"), ("0", "off")):
        monkeypatch.setenv(kc.ENV_MODE, value)
        assert kc.mode() == want
    monkeypatch.delenv(kc.ENV_MODE)
    assert kc.mode() == "auto"
    monkeypatch.setenv(kc.ENV_MODE, "sometimes")
    with pytest.raises(ValueError, match="HIPFER_KERNEL_CACHE='sometimes'"):
        kc.mode()


def test_default_dir(monkeypatch, tmp_path):
    monkeypatch.delenv(kc.ENV_DIR, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    assert kc.default_dir() == str(tmp_path / ".cache" / "hipfer" / "kernels")
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/ignored")  # the XDG spec: absolute only
    assert kc.default_dir() == str(tmp_path / ".cache" / "hipfer" / "kernels")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert kc.default_dir() == str(tmp_path / "xdg" / "hipfer" / "kernels")
    monkeypatch.setenv(kc.ENV_DIR, str(tmp_path / "mine"))
    assert kc.default_dir() == str(tmp_path / "mine")


def test_key_digest_depends_on_every_part():
    base = {"source": "s", "options": ["-std=c++17"], "exprs": ["a", "b"], "arch": "gfx90a",
            "compiler": [[5, 2], 50221153], "cupy": "13.3.0"}
    d = kc.key_digest(base)
    assert len(d) == 64 and d == kc.key_digest(dict(reversed(list(base.items()))))
    for k, v in (("source", "t"), ("options", ["-std=c++20"]), ("exprs", ["b", "a"]),
                 ("arch", "gfx942"), ("compiler", [[6, 0], 60032831]), ("cupy", "14.2.0")):
        assert kc.key_digest({**base, k: v}) != d, k


def test_arch_tag_is_a_plain_name():
    assert kc.arch_tag("gfx90a:sramecc+:xnack-") == "gfx90a_sramecc+_xnack-"
    assert kc.arch_tag("../../etc") == "etc"
    assert kc.arch_tag("") == "unknown"
    assert "/" not in kc.arch_tag("a/b/c")


# ---------------------------------------------------------------- store and load
def test_round_trip_and_private_modes(root):
    store = _stored(root)
    assert _quiet_load(store) == (NAMES, BINARY)
    sub = os.path.dirname(_entry(root))
    for d in (root, sub):
        assert stat.S_IMODE(os.stat(d).st_mode) == 0o700, d
    assert stat.S_IMODE(os.stat(_entry(root)).st_mode) == 0o600
    assert os.listdir(sub) == [DIGEST]  # no temporary file left behind
    # another process's store of the same directory sees it
    assert _quiet_load(kc.KernelStore(root, "gfx90a")) == (NAMES, BINARY)


def test_miss_on_another_key_arch_or_expression_list(root):
    store = _stored(root)
    other = kc.key_digest({"source": "xyz"})
    assert _quiet_load(store, other) is None
    assert _quiet_load(kc.KernelStore(root, "gfx942")) is None
    assert _quiet_load(store, DIGEST, EXPRS[:1]) is None
    assert _quiet_load(store, DIGEST, tuple(reversed(EXPRS))) is None


def test_entry_under_another_keys_name_is_refused(root):
    """An entry copied (or renamed) to another key's file name carries its own key."""
    _stored(root)
    other = kc.key_digest({"source": "other"})
    os.rename(_entry(root), _entry(root, digest=other))
    assert _quiet_load(kc.KernelStore(root, "gfx90a"), other) is None


@pytest.mark.parametrize("cut", [0, 1, kc._HEADER.size - 1, kc._HEADER.size, 100, -1])
def test_truncated_entry_is_a_miss(root, cut):
    _stored(root)
    path = _entry(root)
    data = open(path, "rb").read()
    with open(path, "wb") as f:
        f.write(data[:cut] if cut >= 0 else data[:len(data) + cut])
    assert _quiet_load(kc.KernelStore(root, "gfx90a")) is None


def test_grown_entry_is_a_miss(root):
    _stored(root)
    with open(_entry(root), "ab") as f:
        f.write(b"\0")
    assert _quiet_load(kc.KernelStore(root, "gfx90a")) is None


@pytest.mark.parametrize("where", ["magic", "format", "key", "digest", "length", "count",
                                   "name", "binary", "last"])
def test_tampered_entry_is_a_miss(root, where):
    """One byte changed anywhere (header or body), without the body's SHA-256 redone."""
    _stored(root)
    path = _entry(root)
    data = bytearray(open(path, "rb").read())
    h = kc._HEADER.size
    at = {"magic": 0, "format": 8, "key": 16, "digest": 48, "length": 80, "count": h,
          "name": h + 8, "binary": h + 200, "last": len(data) - 1}[where]
    data[at] ^= 0x40
    with open(path, "wb") as f:
        f.write(data)
    assert _quiet_load(kc.KernelStore(root, "gfx90a")) is None


def test_rehashed_but_inconsistent_bodies_are_refused():
    """Bodies that pass the SHA-256 (written by something else than encode_entry) must
    still be well formed: counts, lengths, text, a non-empty binary."""
    import hashlib
    import struct

    def entry(body):
        head = kc._HEADER.pack(kc._MAGIC, kc.FORMAT, 0, bytes.fromhex(DIGEST),
                               hashlib.sha256(body).digest(), len(body))
        return head + body

    good = kc.encode_entry(DIGEST, EXPRS, NAMES, BINARY)
    assert kc.decode_entry(good, DIGEST, EXPRS) == (NAMES, BINARY)
    u32 = struct.Struct("<I").pack
    assert kc.decode_entry(entry(b""), DIGEST, EXPRS) is None
    assert kc.decode_entry(entry(u32(2) + u32(999) + b"x"), DIGEST, EXPRS) is None
    bad_utf8 = u32(1) + u32(2) + b"\xff\xfe" + u32(1) + b"n" + b"bin"
    assert kc.decode_entry(entry(bad_utf8), DIGEST, ("ab",)) is None
    no_binary = u32(1) + u32(1) + b"a" + u32(1) + b"n"
    assert kc.decode_entry(entry(no_binary), DIGEST, ("a",)) is None
    empty_name = u32(1) + u32(1) + b"a" + u32(0) + b"bin"
    assert kc.decode_entry(entry(empty_name), DIGEST, ("a",)) is None
    assert kc.decode_entry(entry(u32(1) + u32(1) + b"a" + u32(1) + b"n" + b"bin"),
                           DIGEST, ("a",)) == (["n"], b"bin")


def test_bad_arguments_raise():
    store = kc.KernelStore("/nonexistent", "gfx90a")
    with pytest.raises(ValueError, match="key digest"):
        store.load("../../etc/passwd", EXPRS)
    with pytest.raises(ValueError, match="key digest"):
        store.save(DIGEST.upper(), EXPRS, NAMES, BINARY)
    with pytest.raises(ValueError, match="lowered names"):
        kc.encode_entry(DIGEST, EXPRS, NAMES[:1], BINARY)
    with pytest.raises(ValueError, match="empty"):
        kc.encode_entry(DIGEST, EXPRS, NAMES, b"")


# ---------------------------------------------------------------- who owns what
def test_group_or_world_writable_entry_is_refused(root):
    _stored(root)
    os.chmod(_entry(root), 0o664)
    with pytest.warns(RuntimeWarning, match="not a private file"):
        assert kc.KernelStore(root, "gfx90a").load(DIGEST, EXPRS) is None


def test_symlinked_or_special_entry_is_a_miss(root, tmp_path):
    _stored(root)
    target = tmp_path / "elsewhere"
    os.rename(_entry(root), target)
    os.symlink(target, _entry(root))
    assert _quiet_load(kc.KernelStore(root, "gfx90a")) is None
    os.unlink(_entry(root))
    os.mkfifo(_entry(root), 0o600)  # must not block
    with pytest.warns(RuntimeWarning, match="not a private file"):
        assert kc.KernelStore(root, "gfx90a").load(DIGEST, EXPRS) is None


def test_foreign_entry_is_refused(root, monkeypatch):
    """An entry owned by someone else (here: we pretend to be another uid; as root the
    file is really chowned too)."""
    _stored(root)
    if os.geteuid() == 0:
        os.chown(_entry(root), 4321, 4321)
        with pytest.warns(RuntimeWarning, match="not a private file"):
            assert kc.KernelStore(root, "gfx90a").load(DIGEST, EXPRS) is None
        os.chown(_entry(root), 0, 0)
        monkeypatch.setattr(kc, "_warned", set())
    uid = os.geteuid()
    monkeypatch.setattr(os, "geteuid", lambda: uid + 1)
    store = kc.KernelStore(root, "gfx90a")  # the directory is refused first
    with pytest.warns(RuntimeWarning, match="owned by uid"):
        assert store.load(DIGEST, EXPRS) is None


@pytest.mark.parametrize("mode", [0o770, 0o707, 0o777, 0o1777])
def test_writable_directory_is_refused_with_one_warning(root, mode):
    os.makedirs(root)
    os.chmod(root, mode)
    store = kc.KernelStore(root, "gfx90a")
    with pytest.warns(RuntimeWarning, match="writable by group or others") as rec:
        assert store.load(DIGEST, EXPRS) is None
        assert not store.save(DIGEST, EXPRS, NAMES, BINARY)
        assert kc.KernelStore(root, "gfx942").load(DIGEST, EXPRS) is None
    assert len(rec) == 1
    assert store.disabled and os.listdir(root) == []


def test_writable_arch_directory_is_refused(root):
    _stored(root)
    os.chmod(os.path.dirname(_entry(root)), 0o777)
    with pytest.warns(RuntimeWarning, match="writable by group or others"):
        assert kc.KernelStore(root, "gfx90a").load(DIGEST, EXPRS) is None


def test_symlinked_directory_is_refused(root, tmp_path):
    real = tmp_path / "real"
    real.mkdir(mode=0o700)
    os.makedirs(os.path.dirname(root))
    os.symlink(real, root)
    store = kc.KernelStore(root, "gfx90a")
    with pytest.warns(RuntimeWarning, match="is a symlink"):
        assert not store.save(DIGEST, EXPRS, NAMES, BINARY)
    assert list(real.iterdir()) == []


def test_foreign_directory_is_refused(root, monkeypatch):
    os.makedirs(root, mode=0o700)
    if os.geteuid() == 0:
        os.chown(root, 4321, 4321)
    else:
        uid = os.geteuid()
        monkeypatch.setattr(os, "geteuid", lambda: uid + 1)
    with pytest.warns(RuntimeWarning, match="owned by uid"):
        assert not kc.KernelStore(root, "gfx90a").save(DIGEST, EXPRS, NAMES, BINARY)


def test_unusable_location_warns_and_skips(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    store = kc.KernelStore(str(blocker / "kernels"), "gfx90a")
    with pytest.warns(RuntimeWarning, match="hipfer: not using"):
        assert store.load(DIGEST, EXPRS) is None


def test_existing_private_directory_is_used_as_is(root):
    os.makedirs(root, mode=0o755)  # ours, readable by others, writable by no one else
    os.chmod(root, 0o755)
    _stored(root)
    assert stat.S_IMODE(os.stat(root).st_mode) == 0o755  # not the cache's to change


# ---------------------------------------------------------------- concurrency
def _writer(root, n, tag):
    store = kc.KernelStore(root, "gfx90a")
    for i in range(n):
        store.save(DIGEST, EXPRS, [f"{tag}_{i}_a", f"{tag}_{i}_b"], BINARY * (1 + i % 3))


def test_concurrent_writers_never_expose_a_partial_entry(root):
    """Processes rewrite the same entry while this one reads it: every read is a miss
    (before the first write) or one whole entry that some writer wrote."""
    _stored(root)
    ctx = multiprocessing.get_context("fork" if sys.platform.startswith("linux") else "spawn")
    procs = [ctx.Process(target=_writer, args=(root, 150, t)) for t in ("p", "q", "r")]
    for p in procs:
        p.start()
    store, seen = kc.KernelStore(root, "gfx90a"), 0
    while any(p.is_alive() for p in procs) or not seen:
        got = _quiet_load(store)
        assert got is not None  # os.replace: the old entry or the new one, never neither
        names, binary = got
        assert binary in (BINARY, BINARY * 2, BINARY * 3)
        assert names == NAMES or names[0].rsplit("_", 1)[0] == names[1].rsplit("_", 1)[0]
        seen += 1
    for p in procs:
        p.join()
        assert p.exitcode == 0
    assert os.listdir(os.path.dirname(_entry(root))) == [DIGEST]


# ---------------------------------------------------------------- loaded libraries
MAPS = textwrap.dedent("""\
    7f0000000000-7f0000001000 r--p 00000000 08:01 123 /opt/rocm-6.2.0/lib/libamdhip64.so.6.2.60200
    7f0000001000-7f0000002000 r-xp 00001000 08:01 123 /opt/rocm-6.2.0/lib/libamdhip64.so.6.2.60200
    7f0000003000-7f0000004000 r--p 00000000 08:01 124 /usr/lib/libamdhip64.so.5 (deleted)
    7f0000005000-7f0000006000 rw-p 00000000 00:00 0 [heap]
    7f0000006000-7f0000007000 r--p 00000000 08:01 125 /opt/my dir/libhiprtc.so.6
    7f0000008000-7f0000009000 r--p 00000000 08:01 126 /usr/lib/libc.so.6
    7f000000a000-7f000000b000 r--p 00000000 00:00 0
    """)


def test_mapped_libraries_parses_maps():
    assert kc.mapped_libraries(("libamdhip64.so",), MAPS) == [
        "/opt/rocm-6.2.0/lib/libamdhip64.so.6.2.60200"]
    assert kc.mapped_libraries(("libhiprtc", "libc.so"), MAPS) == [
        "/opt/my dir/libhiprtc.so.6", "/usr/lib/libc.so.6"]
    assert kc.mapped_libraries(("libcuda.so",), MAPS) == []


@pytest.mark.skipif(not os.path.exists("/proc/self/maps"), reason="no /proc")
def test_mapped_libraries_of_this_process():
    libs = kc.mapped_libraries(("libc.so", "libc-"))
    assert libs and all(os.path.isabs(p) for p in libs)
    fp = kc.file_fingerprint(libs + ["/nonexistent.so"])
    assert [f[0] for f in fp] == libs and all(f[1] > 0 for f in fp)


# ---------------------------------------------------------------- the engine (CuPy)
@pytest.fixture
def eng():
    pytest.importorskip("cupy")
    from hipfer.backends.cupy import _engine
    return _engine


@pytest.mark.parametrize("version,first", [(60032831, "libamdhip64.so.6"),
                                           (70100000, "libamdhip64.so.7"),
                                           (50221153, "libamdhip64.so.5"),
                                           (60400000 + 99999, "libamdhip64.so.6")])
def test_launch_library_order_on_rocm(eng, version, first):
    names = eng._launch_library_names(True, version)
    assert names[0] == first
    assert sorted(names) == sorted(set(eng._HIP_LIBS) | {first})
    rest = [n for n in eng._HIP_LIBS if n != first]
    assert names[1:] == rest  # then the others, in their usual order


def test_launch_library_order_prefers_what_is_loaded(eng):
    mapped = ["/opt/rocm-6.2.0/lib/libamdhip64.so.6.2.60200"]
    names = eng._launch_library_names(True, 70000000, mapped)
    assert names[:2] == [mapped[0], "libamdhip64.so.7"]
    assert eng._launch_library_names(True, 0) == list(eng._HIP_LIBS)  # version unknown
    assert eng._launch_library_names(False, 0, ["/usr/lib/libcuda.so.1"]) == [
        "/usr/lib/libcuda.so.1", "libcuda.so.1", "libcuda.so"]


def test_who_caches(eng, monkeypatch):
    import cupy
    monkeypatch.setattr(cupy.cuda.runtime, "is_hip", True)
    monkeypatch.setattr(cupy.cuda.compiler, "_decode_cache_payload", None, raising=False)
    monkeypatch.delenv(kc.ENV_MODE, raising=False)
    assert not eng.cupy_caches_modules() and eng._own_cache()  # HIP: never CuPy's
    assert eng.kernel_cache_status().startswith("hipfer (")
    monkeypatch.setattr(cupy.cuda.runtime, "is_hip", False)
    assert eng.cupy_caches_modules() and not eng._own_cache()  # CUDA, CuPy >= 14.2
    monkeypatch.setenv("CUPY_CACHE_DIR", "/somewhere")
    assert eng.kernel_cache_status() == "CuPy (/somewhere; HIPFER_KERNEL_CACHE=on for hipfer's)"
    monkeypatch.setenv(kc.ENV_MODE, "on")
    assert eng._own_cache()
    monkeypatch.setenv(kc.ENV_MODE, "off")
    assert not eng._own_cache()
    assert eng.kernel_cache_status() == "CuPy (/somewhere; HIPFER_KERNEL_CACHE=off)"
    monkeypatch.delattr(cupy.cuda.compiler, "_decode_cache_payload")
    assert eng.kernel_cache_status() == "none (HIPFER_KERNEL_CACHE=off)"
    monkeypatch.setenv(kc.ENV_MODE, "auto")
    assert eng._own_cache()  # CUDA, CuPy < 14.2


class FakeFunction:
    def __init__(self, module, name):
        self.module, self.name, self.ptr = module, name, 0x1000 + len(name)
        self.calls = []

    def __call__(self, grid, block, args, shared_mem=0, stream=None):
        self.calls.append((grid, block, args, shared_mem))


class FakeModule:
    loaded = []

    def load(self, binary):
        assert isinstance(binary, bytes)
        FakeModule.loaded.append(binary)

    def get_function(self, name):
        return FakeFunction(self, name)


@pytest.fixture
def fake_gpu(eng, monkeypatch, tmp_path):
    """The engine on a pretend device: compile_using_nvrtc, Module, the device's arch and
    the compiler's identity replaced; the cache forced on, in tmp_path."""
    import cupy
    compiled = []

    def compile_using_nvrtc(source, options, arch, filename, name_expressions):
        compiled.append((filename, tuple(name_expressions)))
        return (b"BIN:" + filename.encode(), {e: "_Z" + e.replace("<", "I").replace(">", "E")
                                              for e in name_expressions})

    monkeypatch.setattr(cupy.cuda.runtime, "getDevice", lambda: 0)
    monkeypatch.setattr(cupy.cuda.compiler, "compile_using_nvrtc", compile_using_nvrtc)
    monkeypatch.setattr(cupy.cuda.function, "Module", FakeModule)
    monkeypatch.setattr(eng, "_rtc_options", lambda: ("-std=c++17", "-ftz=true"))
    monkeypatch.setattr(eng, "_device_arch", lambda dev: "gfx90a:sramecc+:xnack-")
    monkeypatch.setattr(eng, "_arch_option", lambda: [])
    monkeypatch.setattr(eng, "_compiler_id", lambda: [[5, 2], 50221153, 50221153, []])
    monkeypatch.setattr(eng, "_kernels", {})
    monkeypatch.setattr(eng, "_stores", {})
    monkeypatch.setattr(eng, "_fast", ["off (test)"])
    monkeypatch.setenv(kc.ENV_MODE, "on")
    monkeypatch.setenv(kc.ENV_DIR, str(tmp_path / "kc"))
    FakeModule.loaded = []
    return compiled


def test_engine_compiles_once_then_loads_from_disk(eng, fake_gpu, monkeypatch, tmp_path):
    from hipfer.kernels import all_instances
    _, file, exprs = next(g for g in all_instances() if g[0] == "rng_uniform")
    ks = eng.get_kernels(file, exprs)
    assert fake_gpu == [("rng.cu", tuple(exprs))] and len(ks) == len(exprs)
    assert all(isinstance(k, eng.RawLaunch) and isinstance(k.raw, eng.ModuleKernel) for k in ks)
    assert [k.raw.function.name for k in ks] == ["_Z" + e.replace("<", "I").replace(">", "E")
                                                 for e in exprs]
    assert eng.get_kernels(file, exprs) is ks  # the per-process cache
    assert eng.function_handle(ks[0]) == ks[0].raw.function.ptr
    assert ks[0]((2,), (64,), (1, 2.0), shared_mem=16) is True
    assert ks[0].raw.function.calls == [((2,), (64,), (1, 2.0), 16)]
    assert eng.kernel_cache_status() == f"hipfer ({tmp_path / 'kc'})"

    monkeypatch.setattr(eng, "_kernels", {})  # a new process: the same entry, no compile
    monkeypatch.setattr(eng, "_stores", {})
    ks2 = eng.get_kernels(file, exprs)
    assert len(fake_gpu) == 1
    assert [k.raw.function.name for k in ks2] == [k.raw.function.name for k in ks]
    assert FakeModule.loaded == [b"BIN:rng.cu"] * 2

    monkeypatch.setattr(eng, "_kernels", {})  # other options: another key, a compile
    monkeypatch.setattr(eng, "_rtc_options", lambda: ("-std=c++17",))
    eng.get_kernels(file, exprs)
    assert len(fake_gpu) == 2


def test_engine_recompiles_over_a_bad_entry(eng, fake_gpu, monkeypatch, tmp_path):
    from hipfer.kernels import all_instances
    _, file, exprs = next(g for g in all_instances() if g[0] == "rng_normal")
    eng.get_kernels(file, exprs)
    (sub,) = os.listdir(tmp_path / "kc")
    (entry,) = (tmp_path / "kc" / sub).iterdir()
    data = bytearray(entry.read_bytes())
    data[-1] ^= 1
    entry.write_bytes(bytes(data))
    monkeypatch.setattr(eng, "_kernels", {})
    eng.get_kernels(file, exprs)
    assert len(fake_gpu) == 2 and FakeModule.loaded == [b"BIN:rng.cu"] * 2
    assert entry.read_bytes()[-1] == data[-1] ^ 1  # replaced by a good one


def test_engine_without_its_cache_uses_rawmodule(eng, fake_gpu, monkeypatch):
    import cupy
    made = []

    class FakeRaw:
        def __init__(self, code, options, name_expressions):
            made.append((options, tuple(name_expressions)))

        def get_function(self, e):
            return FakeFunction(None, e)

    monkeypatch.setattr(cupy, "RawModule", FakeRaw)
    monkeypatch.setenv(kc.ENV_MODE, "off")
    ks = eng.get_kernels("rng.cuh", ("a", "b"))
    assert made == [(eng.OPTIONS + eng.contraction_off(), ("a", "b"))] and not fake_gpu
    assert [k.raw.name for k in ks] == ["a", "b"]


def test_module_kernel_follows_the_device(eng, fake_gpu, monkeypatch):
    """A ModuleKernel called on another device launches that device's instance (as
    RawKernel does when hipfer._launch hands it a refused launch)."""
    import cupy
    ks0 = eng.get_kernels("rng.cuh", ("a",))
    monkeypatch.setattr(cupy.cuda.runtime, "getDevice", lambda: 1)
    k = ks0[0].raw
    k((1,), (1,), ())
    other = eng.get_kernels("rng.cuh", ("a",))[0].raw
    assert other is not k and other.device == 1
    assert other.function.calls == [((1,), (1,), (), 0)] and not k.function.calls
    assert k.kernel is other.function


# ---------------------------------------------------------------- on a GPU
def _gpu_usable():
    try:
        from hipfer.prims.registry import gpu_status
        return gpu_status().usable
    except Exception:
        return False


_SCRIPT = textwrap.dedent("""\
    import json, sys, time
    import numpy as np
    t = time.perf_counter()
    import cupy
    import hipfer as hf
    from hipfer.backends.cupy import _engine as eng
    if sys.argv[1] == "warm":
        def refuse(*a, **k):
            raise AssertionError("compiled although the kernel cache holds the group")
        cupy.cuda.compiler.compile_using_nvrtc = refuse
        cupy.RawModule = refuse
    x = hf.asarray(np.linspace(-2, 2, 4099, dtype=np.float32), device="gpu:0")
    y = hf.exp(x) * 3 + hf.sum(x * x)
    print(json.dumps({"y": np.asarray(y.to_device("cpu")).tolist(),
                      "status": eng.kernel_cache_status(), "launch": eng.fast_launch_status(),
                      "s": time.perf_counter() - t}))
    """)


@pytest.mark.skipif(not _gpu_usable(), reason="needs a GPU")
def test_gpu_cold_then_warm_process(tmp_path):
    """A first process compiles and stores; fresh processes (fast launch on and off)
    load every group from the cache, compile nothing, and compute the same values."""
    import numpy as np
    env = dict(os.environ, HIPFER_KERNEL_CACHE="on",
               HIPFER_KERNEL_CACHE_DIR=str(tmp_path / "kc"))
    runs = {}
    for name, arg, fast in (("cold", "cold", "1"), ("warm", "warm", "1"),
                            ("warm_raw", "warm", "0")):
        out = subprocess.run([sys.executable, "-c", _SCRIPT, arg], capture_output=True,
                             text=True, env=dict(env, HIPFER_FAST_LAUNCH=fast), timeout=600)
        assert out.returncode == 0, out.stderr[-4000:]
        runs[name] = json.loads(out.stdout.strip().splitlines()[-1])
    ref = np.exp(np.linspace(-2, 2, 4099, dtype=np.float32)) * 3
    ref += np.sum(np.linspace(-2, 2, 4099, dtype=np.float32) ** 2)
    for name, r in runs.items():
        assert r["status"].startswith("hipfer ("), (name, r["status"])
        np.testing.assert_allclose(r["y"], ref, rtol=1e-5, err_msg=name)
    assert runs["warm_raw"]["launch"].startswith("off")
    entries = [p for d in (tmp_path / "kc").iterdir() for p in d.iterdir()]
    assert entries and all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in entries)
    print({k: round(v["s"], 2) for k, v in runs.items()})
