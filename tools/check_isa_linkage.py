#!/usr/bin/env python3
"""Fails when code compiled with extra ISA flags can be linked into code paths that must run
on a plain x86-64 CPU.

The x86 kernels are built per ISA (CMakeLists.txt: *_avx2.cc with -mavx2 -mfma -mf16c,
*_avx512.cc, *_avx512vnni.cc, *_avx512bf16.cc and *_avx512vbmi.cc with AVX-512 flags on top);
everything else is built without ISA flags and must run anywhere. An inline function, template instantiation or implicit
member function with external linkage is emitted as a weak (COMDAT) definition in every
object that uses it, and the linker keeps one of them for the whole program. If it keeps the
one from an AVX-512 object, plain code (or AVX2 code) calls AVX-512 instructions and dies
with SIGILL on a CPU without them. Likewise a static initializer in an ISA object runs at
start-up on every CPU.

The rule checked, per object file compiled with ISA flags beyond the build's baseline (found
from compile_commands.json):
  every weak or unique (vague-linkage) function it defines, every function its static
  initializers (.init_array, .ctors) call, and every local function any of those reaches
  (calls, jumps and address references, followed transitively inside the object), must
  contain only baseline x86-64 instructions.
No name is exempt: std::vector<float>::_M_default_append compiled with -mavx512f may be
auto-vectorized with zmm registers as well as any ignis helper. A vague-linkage function
whose code happens to be baseline is harmless whichever copy the linker keeps, so it passes;
one that uses the object's ISA fails, whether or not another object defines it today (a
later file, a test or a shared library may). References to other global functions are not
followed: both copies of a weak function call the same global functions.

"Baseline" is recognized by what an ISA object can contain: every ISA flag set here implies
AVX, and with AVX enabled GCC and Clang encode all SSE-family instructions with VEX, so any
instruction beyond SSE2 shows as a v-prefixed mnemonic, a ymm/zmm/mask register, an AVX-512
mask instruction (k*), or one of the scalar extensions listed in SCALAR_EXTENSIONS.

Usage: python3 tools/check_isa_linkage.py [BUILD_DIR]   (default: build)
Exit status 0 when clean, 1 with a report of the offending functions, 2 on usage errors.
"""
from __future__ import annotations

import bisect
import json
import os
import re
import shlex
import subprocess
import sys
from collections import defaultdict
from dataclasses import dataclass, field

# -m flags that enable instructions beyond the default target.
ISA_FLAG = re.compile(
    r"^-m(arch=.*|avx\w*|sse\w*|ssse3|fma4?|f16c|bmi2?|lzcnt|popcnt|movbe|adx|aes|pclmul|vpclmulqdq|vaes|gfni"
    r"|sha|rdrnd|rdseed|amx\w*|xop|tbm|prfchw|crc32|evex512)$")
# Sources named for an ISA are checked even if their flags were lost on the way.
ISA_SOURCE = re.compile(r"_(avx\w*|sse\w*|fma\w*)\.(cc|cpp|cxx|c)$")

# Instructions of extensions beyond x86-64 that are not VEX-encoded (BMI1/2, LZCNT, POPCNT,
# MOVBE, ADX, CRC32, RDRAND/RDSEED, PREFETCHW), plus the non-VEX SSE3..SSE4.2 forms a
# compiler would only emit without AVX (inline assembly could still use them).
SCALAR_EXTENSIONS = {
    "andn", "bextr", "blsi", "blsmsk", "blsr", "bzhi", "mulx", "pdep", "pext", "rorx", "sarx", "shlx", "shrx",
    "lzcnt", "tzcnt", "popcnt", "movbe", "adcx", "adox", "crc32", "rdrand", "rdseed", "prefetchw",
    "addsubpd", "addsubps", "haddpd", "haddps", "hsubpd", "hsubps", "lddqu", "movddup", "movshdup", "movsldup",
    "pabsb", "pabsd", "pabsw", "palignr", "phaddd", "phaddsw", "phaddw", "phsubd", "phsubsw", "phsubw",
    "pmaddubsw", "pmulhrsw", "pshufb", "psignb", "psignd", "psignw",
    "blendpd", "blendps", "blendvpd", "blendvps", "dppd", "dpps", "extractps", "insertps", "movntdqa", "mpsadbw",
    "packusdw", "pblendvb", "pblendw", "pcmpeqq", "pextrb", "pextrd", "pextrq", "phminposuw", "pinsrb", "pinsrd",
    "pinsrq", "pmaxsb", "pmaxsd", "pmaxud", "pmaxuw", "pminsb", "pminsd", "pminud", "pminuw", "pmovsxbd",
    "pmovsxbq", "pmovsxbw", "pmovsxdq", "pmovsxwd", "pmovsxwq", "pmovzxbd", "pmovzxbq", "pmovzxbw", "pmovzxdq",
    "pmovzxwd", "pmovzxwq", "pmuldq", "pmulld", "ptest", "roundpd", "roundps", "roundsd", "roundss",
    "pcmpestri", "pcmpestrm", "pcmpistri", "pcmpistrm", "pcmpgtq",
}
# Mnemonics starting with v or k that are baseline.
BASELINE_VK = {"verr", "verw"}
WIDE_REGISTER = re.compile(r"\b([yz]mm\d+|k[0-7])\b")
INSTRUCTION = re.compile(r"^\s*([0-9a-f]+):\t(.*)$")
FUNCTION_HEADER = re.compile(r"^([0-9a-f]+) <(.+)>:$")
RELOCATION = re.compile(r"([0-9a-f]+): (R_X86_64_\w+)\s+(\S+)")
BRANCH_TARGET = re.compile(r"^([0-9a-f]+) <")
SYMBOL_WITH_ADDEND = re.compile(r"^(.*?)([+-]0x[0-9a-f]+)?$")
STARTUP_SECTIONS = (".init_array", ".ctors", ".preinit_array")


@dataclass
class Function:
    section: str
    start: int
    size: int
    names: list[str] = field(default_factory=list)
    binding: str = "l"  # l local, g global, w weak, u unique


@dataclass
class ObjectFile:
    path: str
    source: str
    flags: tuple[str, ...]


def run(args: list[str]) -> str:
    return subprocess.run(args, check=True, capture_output=True, text=True).stdout


def load_objects(build_dir: str) -> list[ObjectFile]:
    db_path = os.path.join(build_dir, "compile_commands.json")
    if not os.path.exists(db_path):
        sys.exit(f"check_isa_linkage: {db_path} not found (configure with CMAKE_EXPORT_COMPILE_COMMANDS=ON)")
    objects = []
    with open(db_path) as f:
        for entry in json.load(f):
            args = entry.get("arguments") or shlex.split(entry["command"])
            output = entry.get("output")
            if output is None and "-o" in args:
                output = args[args.index("-o") + 1]
            if output is None:
                continue
            path = os.path.normpath(os.path.join(entry["directory"], output))
            flags = tuple(sorted(a for a in args if ISA_FLAG.match(a)))
            objects.append(ObjectFile(path, entry["file"], flags))
    return objects


def isa_objects(objects: list[ObjectFile]) -> list[ObjectFile]:
    """Objects built with ISA flags beyond those every object of the build has."""
    if not objects:
        return []
    baseline = set(objects[0].flags).intersection(*(o.flags for o in objects))
    return [o for o in objects if set(o.flags) - baseline or ISA_SOURCE.search(o.source)]


def is_baseline(mnemonic: str, operands: str) -> bool:
    if mnemonic == "(bad)":  # bytes objdump cannot decode: fail closed
        return False
    if mnemonic[:1] in ("v", "k") and mnemonic not in BASELINE_VK:
        return False
    if mnemonic in SCALAR_EXTENSIONS:
        return False
    return not WIDE_REGISTER.search(re.sub(r"<[^>]*>", "", operands))


class ObjectAnalysis:
    """Functions, instructions and references of one object file (objdump, Intel syntax)."""

    def __init__(self, path: str):
        self.path = path
        self.functions: dict[tuple[str, int], Function] = {}
        self.by_name: dict[str, list[Function]] = defaultdict(list)
        self.starts: dict[str, list[int]] = defaultdict(list)  # section -> sorted starts
        self.code: dict[str, list[tuple[int, str, str, list[tuple[str, str]]]]] = defaultdict(list)
        self._read_symbols()
        self._read_code()

    def _read_symbols(self) -> None:
        # objdump -t: VALUE FLAGS SECTION\tSIZE NAME, FLAGS a 7-character column.
        for line in run(["objdump", "-t", "-w", self.path]).splitlines():
            m = re.match(r"^([0-9a-f]{16}) (.{7}) (\S+)\t([0-9a-f]+) (?:\.hidden )?(\S+)$", line)
            if not m or "F" not in m.group(2) or m.group(3) == "*UND*":
                continue
            flags, section = m.group(2), m.group(3)
            binding = "u" if "u" in flags[:2] else "w" if "w" in flags[:2] else "g" if "g" in flags[:2] else "l"
            key = (section, int(m.group(1), 16))
            fn = self.functions.get(key)
            if fn is None:
                fn = self.functions[key] = Function(section, key[1], int(m.group(4), 16))
            fn.names.append(m.group(5))
            fn.size = max(fn.size, int(m.group(4), 16))
            if "lguw".index(binding) > "lguw".index(fn.binding):
                fn.binding = binding
            self.by_name[m.group(5)].append(fn)
        for section, start in self.functions:
            self.starts[section].append(start)
        for starts in self.starts.values():
            starts.sort()

    def _read_code(self) -> None:
        section = None
        seen_sections: set[str] = set()
        text = run(["objdump", "-d", "-r", "-w", "--no-show-raw-insn", "-M", "intel", self.path])
        for line in text.splitlines():
            if line.startswith("Disassembly of section "):
                section = line[len("Disassembly of section "):].rstrip(":")
                if section in seen_sections:
                    raise RuntimeError(f"{self.path}: two executable sections named {section}; cannot map offsets")
                seen_sections.add(section)
                continue
            m = INSTRUCTION.match(line)
            if section is None or not m:
                continue
            offset, rest = int(m.group(1), 16), m.group(2)
            relocs = [(kind, target) for _, kind, target in RELOCATION.findall(rest)]
            body = RELOCATION.sub("", rest).split("#")[0].strip()
            if not body and relocs and self.code[section]:
                self.code[section][-1][3].extend(relocs)  # relocation printed on its own line
                continue
            parts = body.split(None, 1)
            mnemonic = parts[0] if parts else ""
            if mnemonic in ("lock", "rep", "repz", "repnz", "repe", "repne", "notrack", "bnd", "data16") and len(parts) > 1:
                parts = parts[1].split(None, 1)
                mnemonic = parts[0]
            operands = parts[1] if len(parts) > 1 else ""
            self.code[section].append((offset, mnemonic, operands, relocs))

    def function_at(self, section: str, offset: int) -> Function | None:
        starts = self.starts.get(section)
        if not starts:
            return None
        i = bisect.bisect_right(starts, offset) - 1
        if i >= 0:
            fn = self.functions[(section, starts[i])]
            if offset < fn.start + max(fn.size, 1):
                return fn
        return None

    def instructions(self, fn: Function):
        for insn in self.code.get(fn.section, []):
            if fn.start <= insn[0] < fn.start + fn.size:
                yield insn

    def reference(self, kind: str, target: str, section: str) -> tuple[Function | None, str | None]:
        """The local function a relocation or branch refers to, or an explanation when a
        reference into code cannot be resolved (the check then fails closed)."""
        m = SYMBOL_WITH_ADDEND.match(target)
        name, addend = m.group(1), int(m.group(2), 16) if m.group(2) else 0
        if name in self.by_name:
            fns = [f for f in self.by_name[name] if f.binding == "l"]
            return (fns[0] if fns else None), None
        if name in self.starts or name in self.code:  # a section symbol: find the function by offset
            pc_relative = "PC" in kind or "PLT" in kind or "GOT" in kind
            offset = addend + 4 if pc_relative else addend
            fn = self.function_at(name, offset)
            if fn is None:
                return None, f"reference {kind} {target} into code matches no function"
            return (fn if fn.binding == "l" else None), None
        return None, None


def check_object(obj: ObjectFile) -> list[str]:
    a = ObjectAnalysis(obj.path)
    roots: list[tuple[Function, str]] = [(f, "vague linkage") for f in a.functions.values() if f.binding in "wu"]
    relocs = run(["objdump", "-r", "-w", obj.path])
    section = None
    for line in relocs.splitlines():
        m = re.match(r"^RELOCATION RECORDS FOR \[(.+)\]:$", line)
        if m:
            section = m.group(1)
            continue
        parts = line.split()
        if section in STARTUP_SECTIONS and len(parts) == 3 and parts[1].startswith("R_X86_64"):
            fn, err = a.reference(parts[1], parts[2], section)
            if err:
                return [f"{obj.source}: static initializer: {err}"]
            if fn is None and parts[2] in a.by_name:
                fn = a.by_name[parts[2]][0]
            if fn is not None:
                roots.append((fn, "static initializer"))

    problems = []
    for root, why in roots:
        seen = {(root.section, root.start)}
        queue = [(root, [root.names[0]])]
        while queue:
            fn, path = queue.pop()
            bad = next(((m, o) for _, m, o, _ in a.instructions(fn) if not is_baseline(m, o)), None)
            if bad:
                problems.append((why, path, f"{bad[0]} {bad[1]}".strip()))
                break
            for _, mnemonic, operands, refs in a.instructions(fn):
                branch = BRANCH_TARGET.match(operands) if mnemonic.startswith(("j", "call")) else None
                targets = list(refs)
                if branch and not refs:
                    targets.append(("branch", f"{fn.section}+0x{int(branch.group(1), 16):x}"))
                for kind, target in targets:
                    if kind == "branch":
                        callee, err = a.function_at(fn.section, int(target.rsplit("+0x", 1)[1], 16)), None
                        callee = callee if callee is not None and callee.binding == "l" else None
                    else:
                        callee, err = a.reference(kind, target, fn.section)
                    if err:
                        problems.append((why, path, err))
                        continue
                    if callee is not None and (callee.section, callee.start) not in seen:
                        seen.add((callee.section, callee.start))
                        queue.append((callee, path + [callee.names[0]]))
    if not problems:
        return []
    names = sorted({n for _, path, _ in problems for n in path})
    demangled = dict(zip(names, run(["c++filt"] + names).splitlines())) if names else {}
    out = []
    for why, path, insn in problems:
        chain = " -> ".join(demangled.get(n, n) for n in path)
        out.append(f"{obj.source} [{' '.join(obj.flags)}]\n  {why}: {chain}\n  uses: {insn}")
    return out


def main() -> int:
    build_dir = sys.argv[1] if len(sys.argv) > 1 else "build"
    if len(sys.argv) > 2 or build_dir in ("-h", "--help"):
        print(__doc__)
        return 2
    objects = isa_objects(load_objects(build_dir))
    missing = [o.path for o in objects if not os.path.exists(o.path)]
    if missing:
        print("check_isa_linkage: objects not built yet:\n  " + "\n  ".join(missing), file=sys.stderr)
        return 2
    problems = []
    for obj in objects:
        problems += check_object(obj)
    if problems:
        print("ISA linkage check failed: code built with ISA flags can be linked into plain code paths.\n"
              "Give these functions internal linkage (an unnamed namespace, as in src/kernels/x86/"
              "gemm_blocked.h), define them out of line in a file without ISA flags, or keep the type "
              "out of the ISA file (tools/check_isa_linkage.py explains the rule).\n")
        print("\n".join(problems))
        return 1
    print(f"ISA linkage check: {len(objects)} ISA-flagged objects, no vague-linkage or start-up code "
          "beyond baseline x86-64")
    return 0


if __name__ == "__main__":
    sys.exit(main())
