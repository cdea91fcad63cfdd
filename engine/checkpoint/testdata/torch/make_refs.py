"""Reference data for the .pth reader, made with CPython's own pickle and
zipfile (no torch needed), so the Go unpickler is checked against an
independent implementation.

  python3 make_refs.py ref  CODEC.pth OUT.json   # names, dtypes, shapes, sha256 of each tensor
  python3 make_refs.py views OUT.pth OUT.json     # a small archive with strided views and every dtype
"""
import collections, hashlib, json, pickle, struct, sys, types, zipfile

DTYPES = {"FloatStorage": ("F32", "<f", 4), "BFloat16Storage": ("BF16", "<H", 2),
          "HalfStorage": ("F16", "<e", 2), "LongStorage": ("I64", "<q", 8),
          "IntStorage": ("I32", "<i", 4), "BoolStorage": ("BOOL", "<?", 1),
          "Float8_e4m3fnStorage": ("F8_E4M3", "<B", 1)}


def gather(raw, es, offset, shape, stride):
    out = bytearray()
    n = 1
    for d in shape:
        n *= d
    idx = [0] * len(shape)
    for _ in range(n):
        pos = offset + sum(i * s for i, s in zip(idx, stride))
        out += raw[pos * es:(pos + 1) * es]
        for d in reversed(range(len(shape))):
            idx[d] += 1
            if idx[d] < shape[d]:
                break
            idx[d] = 0
    return bytes(out)


def ref(pth, out):
    z = zipfile.ZipFile(pth)
    pkl = [i.filename for i in z.infolist() if i.filename.endswith("/data.pkl")][0]
    prefix = pkl[: -len("data.pkl")]

    def rebuild(storage, offset, size, stride, *rest):
        dt, _, es = DTYPES[storage[0]]
        raw = z.read(prefix + "data/" + storage[1])
        return dict(dtype=dt, shape=list(size), sha256=hashlib.sha256(gather(raw, es, offset, size, stride)).hexdigest())

    class U(pickle.Unpickler):
        def find_class(self, mod, name):
            if (mod, name) == ("collections", "OrderedDict"):
                return collections.OrderedDict
            if (mod, name) == ("torch._utils", "_rebuild_tensor_v2"):
                return rebuild
            if (mod, name) == ("torch._utils", "_rebuild_parameter"):
                return lambda t, *a: t
            if mod == "torch" and name in DTYPES:
                return name
            raise pickle.UnpicklingError("refusing %s.%s" % (mod, name))

        def persistent_load(self, pid):
            return (pid[1], pid[2])

    d = U(z.open(pkl)).load()
    rows = [dict(name=k, **v) for k, v in d.items()]
    with open(out, "w") as f:
        json.dump(rows, f, indent=0)
    print(len(rows), "tensors")


def views(out_pth, out_json):
    torch = types.ModuleType("torch")
    utils = types.ModuleType("torch._utils")
    sys.modules["torch"], sys.modules["torch._utils"] = torch, utils

    def _rebuild_tensor_v2(*a):
        pass

    def _rebuild_parameter(*a):
        pass

    for f in (_rebuild_tensor_v2, _rebuild_parameter):
        f.__module__, f.__qualname__ = "torch._utils", f.__name__
        setattr(utils, f.__name__, f)
    for name in DTYPES:
        cls = type(name, (), {"__module__": "torch"})
        setattr(torch, name, cls)

    class Storage:
        def __init__(self, typ, key, values):
            self.typ, self.key = getattr(torch, typ), key
            self.fmt, self.es = DTYPES[typ][1:]
            self.numel = len(values)
            self.raw = b"".join(struct.pack(self.fmt, v) for v in values)

    class View:
        def __init__(self, s, offset, shape, stride):
            self.s, self.offset, self.shape, self.stride = s, offset, shape, stride

        def __reduce__(self):
            return (_rebuild_tensor_v2, (self.s, self.offset, tuple(self.shape), tuple(self.stride), False, collections.OrderedDict()))

    class Param:
        def __init__(self, v):
            self.v = v

        def __reduce__(self):
            return (_rebuild_parameter, (self.v, True, collections.OrderedDict()))

    class P(pickle.Pickler):
        def persistent_id(self, obj):
            if isinstance(obj, Storage):
                return ("storage", obj.typ, obj.key, "cpu", obj.numel)
            return None

    f32 = Storage("FloatStorage", "0", [float(i) + 0.5 for i in range(24)])
    bf16 = Storage("BFloat16Storage", "1", [0x3f80 + i for i in range(12)])
    i64 = Storage("LongStorage", "2", [-3, 7, 1 << 40, -(1 << 50), 0, 9])
    bl = Storage("BoolStorage", "3", [True, False, True])
    f16 = Storage("HalfStorage", "4", [1.0, -2.0, 0.25, 65504.0])
    i32 = Storage("IntStorage", "5", [1, -1, 123456, 7])
    f8 = Storage("Float8_e4m3fnStorage", "6", [0x38, 0x40, 0xb8, 0x7e])
    entries = collections.OrderedDict()
    entries["plain"] = View(f32, 0, [2, 3, 4], [12, 4, 1])
    entries["transposed"] = View(f32, 0, [4, 6], [1, 4])          # .t() of a [6,4]
    entries["offset_slice"] = View(f32, 13, [2, 5], [6, 1])       # rows of a [4,6] from element 13
    entries["param.bf16_t"] = Param(View(bf16, 0, [3, 4], [1, 3]))
    entries["i64"] = View(i64, 1, [5], [1])
    entries["bool"] = View(bl, 0, [3], [1])
    entries["f16"] = View(f16, 0, [2, 2], [2, 1])
    entries["i32_step"] = View(i32, 0, [2], [2])
    entries["f8"] = View(f8, 0, [2, 2], [2, 1])
    entries["scalar"] = View(f32, 23, [], [])
    entries["empty"] = View(f32, 0, [0, 4], [4, 1])
    root = collections.OrderedDict(entries)
    root["epoch"] = 3  # non-tensor leaf, skipped
    import io
    buf = io.BytesIO()
    P(buf, protocol=2).dump(root)
    with zipfile.ZipFile(out_pth, "w", zipfile.ZIP_STORED) as z:
        z.writestr("views/data.pkl", buf.getvalue())
        z.writestr("views/byteorder", "little")
        for s in (f32, bf16, i64, bl, f16, i32, f8):
            z.writestr("views/data/" + s.key, s.raw)
    rows = []
    for k, v in entries.items():
        v = v.v if isinstance(v, Param) else v
        rows.append(dict(name=k, dtype=[d[0] for n, d in DTYPES.items() if getattr(torch, n) is v.s.typ][0],
                         shape=v.shape, hex=gather(v.s.raw, v.s.es, v.offset, v.shape, v.stride).hex()))
    with open(out_json, "w") as f:
        json.dump(rows, f, indent=0)


if __name__ == "__main__":
    {"ref": ref, "views": views}[sys.argv[1]](*sys.argv[2:])
