"""What ``hipfer bench`` writes: a markdown table, JSON, and a PNG plot (matplotlib)."""
from __future__ import annotations

import json

__all__ = ["format_table", "write_json", "write_plot"]


def _ms(v) -> str:
    return "" if v is None else f"{v:.4g}"


def _rate(r) -> str:
    if "tflops" in r:
        return f"{r['tflops']:.3g} TFLOP/s"
    if "gbps" in r:
        return f"{r['gbps']:.1f} GB/s"
    return ""


def _size(n) -> str:
    """Bytes as B / KiB / MiB / GiB."""
    if n is None:
        return ""
    for unit in ("B", "KiB", "MiB"):
        if abs(n) < 1024:
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.3g} {unit}"
        n /= 1024
    return f"{n:.3g} GiB"


def _targets(r) -> str:
    parts = []
    for t in r.get("targets", ()):
        v = "" if t["value"] is None else (
            f" ({_size(t['value'])})" if t["metric"] == "temp_bytes" else f" ({t['value']:.2f})")
        status = t["status"].upper() if t["status"] == "miss" else t["status"]
        parts.append(f"{status} {t['label']}{v}")
    return "; ".join(parts)


def _note(r) -> str:
    parts = []
    if "error" in r:
        parts.append(f"error: {r['error']}")
    if r.get("note"):
        parts.append(r["note"])
    b = r.get("baseline")
    if b:
        parts.append(f"{b['label']} {_ms(b['ms'])} ms, ratio {b['ratio']:.3f}" if "ms" in b
                     else f"{b['label']} failed: {b['error']}")
    for peer, p in r.get("peers", {}).items():
        if "error" in p:
            parts.append(f"{peer} failed: {p['error']}")
    e = r.get("rel_err")
    if e:
        parts.append(f"rel.err vs {e['vs']} {e['value']:.1e}" if e["value"] is not None
                     else f"no check vs {e['vs']}: {e.get('why', '')}")
    return "; ".join(parts)


def _cell(text) -> str:
    """Text safe in a markdown table cell."""
    return str(text).replace("|", "\\|").replace("\n", " ")


def format_table(result: dict) -> str:
    """The report as markdown: a heading line, the limits, one row a case, the targets."""
    meta, lim = result["meta"], result["limits"]
    peers = meta["peers"]
    vers = ", ".join(f"{k} {v}" for k, v in meta["versions"].items())
    lines = [
        f"# hipfer bench on {meta['device']}: {meta['device_name']}",
        "",
        f"{meta['date']}{' (--quick)' if meta['quick'] else ''}; {vers}; peers: "
        f"{', '.join(peers) or 'none'}; {meta['elapsed_s']} s; 1-min load average "
        f"{meta['loadavg_1min']['start']} at the start, {meta['loadavg_1min']['end']} at the end"
        + "".join(f"; {k}={v}" for k, v in meta.get("threads_env", {}).items()),
        "",
        "Times: median of repeats of warm calls on random data (never zeros), "
        f"{'device events' if meta['device'] == 'gpu' else 'time.perf_counter'}. "
        "'of limit': GB/s over the copy bandwidth (bytes read + written), or TFLOP/s over the "
        "GEMM rate of the same dtype. 'temporaries': the peak memory hipfer allocated during one "
        "call beyond its result. 'vs <peer>': hipfer time / peer time (< 1: hipfer is faster).",
        "",
        "| limit | value |",
        "| --- | ---: |",
        f"| copy bandwidth ({lim['copy_bytes'] >> 20} MiB, read + written) | {lim['copy_gbps']:.1f} GB/s |",
    ]
    for dt, v in lim["gemm_tflops"].items():
        lines.append(f"| GEMM {dt} {lim['gemm_n']}^3 | {v:.3g} TFLOP/s |")
    lines += ["", "| group | case | hipfer ms | rate | of limit | temporaries | "
              + " | ".join(f"{p} ms | vs {p}" for p in peers) + " | targets | note |",
              "| --- | --- | ---: | ---: | ---: | ---: | "
              + " | ".join("---: | ---:" for _ in peers) + " | --- | --- |"]
    for r in result["cases"]:
        cells = [r["group"], r["name"], _ms(r.get("ms")), _rate(r),
                 "" if r.get("of_limit") is None else f"{r['of_limit']:.2f}",
                 _size(r.get("memory", {}).get("temp_bytes"))]
        for p in peers:
            pr = r.get("peers", {}).get(p, {})
            cells += [_ms(pr.get("ms")), "" if pr.get("ratio") is None else f"{pr['ratio']:.2f}"]
        cells += [_targets(r), _note(r)]
        lines.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    s = result["summary"]
    lines += ["", "| target | pass | miss | n/a |", "| --- | ---: | ---: | ---: |"]
    for label, c in s["targets"].items():
        lines.append(f"| {label} | {c['pass']} | {c['miss']} | {c['n/a']} |")
    lines += ["", f"{s['cases']} case(s), {s['errors']} failed."]
    return "\n".join(lines) + "\n"


def write_json(result: dict, path: str) -> None:
    with open(path, "w") as f:
        json.dump(result, f, indent=1)
        f.write("\n")


def write_plot(result: dict, path: str) -> None:
    """Two panels, one bar a case: the fraction of the limit (goal lines at 0.6, 0.85,
    0.95), and hipfer time / peer time on a log scale (1: as fast; 1.2: the CPU goal)."""
    from matplotlib.figure import Figure
    rows = [r for r in result["cases"] if "ms" in r]
    peers = result["meta"]["peers"]
    n = max(1, len(rows))
    fig = Figure(figsize=(15, 1.8 + 0.26 * n))
    ax1, ax2 = fig.subplots(1, 2, sharey=True)
    ys = list(range(len(rows)))
    ax1.barh(ys, [r.get("of_limit") or 0.0 for r in rows], color="tab:blue")
    for x, style in ((0.6, ":"), (0.85, "--"), (0.95, "-.")):
        ax1.axvline(x, color="gray", linestyle=style, linewidth=1)
    ax1.set_xlabel("of limit (copy bandwidth or GEMM rate); goals 0.6 / 0.85 / 0.95")
    ax1.set_yticks(ys)
    ax1.set_yticklabels([f"{r['group']}: {r['name']}" for r in rows], fontsize=7)
    ax1.invert_yaxis()
    h = 0.8 / max(1, len(peers))
    colors = {"numpy": "tab:green", "cupy": "tab:orange", "torch": "tab:red"}
    any_ratio = False
    for j, p in enumerate(peers):
        vals = [r.get("peers", {}).get(p, {}).get("ratio") for r in rows]
        pos = [(y - 0.4 + h * (j + 0.5), v) for y, v in zip(ys, vals) if v]
        if pos:  # bars from 1: left is faster, right is slower
            any_ratio = True
            ax2.barh([a for a, _ in pos], [b - 1.0 for _, b in pos], left=1.0, height=h,
                     label=f"hipfer / {p}", color=colors.get(p))
    ax2.axvline(1.0, color="black", linewidth=1)
    ax2.axvline(1.2, color="gray", linestyle="--", linewidth=1)
    if any_ratio:
        from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter
        ax2.set_xscale("log")
        ax2.xaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
        ax2.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        ax2.xaxis.set_minor_formatter(NullFormatter())
        ax2.legend(loc="lower right", fontsize=8)
    ax2.set_xlabel("hipfer time / peer time (< 1: hipfer faster)")
    meta = result["meta"]
    fig.suptitle(f"hipfer bench, {meta['device']}: {meta['device_name']}, {meta['date']}"
                 f"{' (--quick)' if meta['quick'] else ''}", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
