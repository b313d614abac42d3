#!/usr/bin/env python3
"""Writes the seed corpus of the libFuzzer targets: fuzz/corpus/<target>/.

    python3 fuzz/make_corpus.py fuzz/corpus        (or: make fuzz-corpus)

Seeds are small valid files of every supported kind and a few invalid ones
(each near a different check), so that a short bounded run starts deep in
every parser. The output is deterministic; the directory is replaced. The
volume targets' inputs may carry a detached data file after a marker line
(see fuzz/fuzz_volume_split.h): seeds with "data file"/ElementDataFile name
"data.raw" and put its bytes after the marker.
"""
import gzip
import os
import shutil
import struct
import sys
import zlib

MARK = b"\n--data.raw--\n"


def u8_data(n):
    return bytes((i * 37 + 11) % 256 for i in range(n))


def f32_data(n):
    return b"".join(struct.pack("<f", (i % 13) * 0.25) for i in range(n))


def gz(b):
    # mtime 0: deterministic output
    return gzip.compress(b, compresslevel=6, mtime=0)


def vol(enc, dims, chan=1, bmin=(0, 0, 0), bmax=(1, 1, 1), data=None, version=3):
    h = b"VOL" + bytes([version]) + struct.pack("<iiiii", enc, *dims, chan)
    h += struct.pack("<6f", *bmin, *bmax)
    n = dims[0] * dims[1] * dims[2] * chan
    if data is None:
        data = f32_data(n) if enc == 1 else u8_data(n)
    return h + data


def mitsuba():
    s = {}
    s["f32_4x4x3"] = vol(1, (4, 4, 3))
    s["u8_2x3x2"] = vol(3, (2, 3, 2), bmin=(-1, -2, -3), bmax=(1, 2, 3))
    s["f32_1x1x1"] = vol(1, (1, 1, 1))
    s["bad_truncated_header"] = vol(1, (2, 2, 2))[:30]
    s["bad_magic"] = b"VOX" + vol(1, (1, 1, 1))[3:]
    s["bad_version"] = vol(1, (1, 1, 1), version=2)
    s["bad_float16"] = vol(2, (1, 1, 1), data=b"\0\0")
    s["bad_channels"] = vol(1, (1, 1, 1), chan=3)
    s["bad_empty_box"] = vol(1, (2, 1, 1), bmin=(0, 0, 0), bmax=(0, 1, 1))
    s["bad_nan"] = vol(1, (2, 1, 1), data=struct.pack("<ff", 1.0, float("nan")))
    s["bad_huge"] = vol(1, (65536, 65536, 65536), data=b"")
    s["bad_short_data"] = vol(1, (4, 4, 4))[:-5]
    s["bad_long_data"] = vol(3, (2, 2, 2)) + b"xx"
    return s


def mha(keys, data=b"", detached=None):
    text = "".join("%s = %s\n" % kv for kv in keys).encode()
    if detached is not None:
        return text + MARK[1:] + detached
    return text + data


def metaimage():
    s = {}
    d48 = u8_data(48)
    base = [("ObjectType", "Image"), ("NDims", "3"), ("BinaryData", "True"),
            ("BinaryDataByteOrderMSB", "False"), ("ElementSpacing", "1 1 2"), ("Offset", "0 0 0"),
            ("DimSize", "4 4 3"), ("ElementType", "MET_UCHAR")]
    s["local_u8"] = mha(base + [("ElementDataFile", "LOCAL")], d48)
    z = zlib.compress(d48, 6)
    s["local_zlib"] = mha([("NDims", "3"), ("CompressedData", "True"), ("CompressedDataSize", str(len(z))),
                           ("DimSize", "4 4 3"), ("ElementType", "MET_UCHAR"), ("ElementDataFile", "LOCAL")], z)
    g = gz(d48)
    s["local_gzip"] = mha([("NDims", "3"), ("CompressedData", "True"), ("DimSize", "4 4 3"),
                           ("ElementType", "MET_UCHAR"), ("ElementDataFile", "LOCAL")], g)
    s["local_i16_msb_2d"] = mha([("NDims", "2"), ("DimSize", "3 2"), ("ElementType", "MET_SHORT"),
                                 ("ElementByteOrderMSB", "True"), ("Position", "1.5 -2"),
                                 ("TransformMatrix", "1 0 0 1"), ("ElementDataFile", "LOCAL")],
                                struct.pack(">6h", -3, -2, -1, 0, 1, 2))
    s["local_f64"] = mha([("NDims", "3"), ("DimSize", "2 1 1"), ("ElementType", "MET_DOUBLE"),
                          ("ElementSize", "0.5 0.5 0.5"), ("ElementDataFile", "LOCAL")],
                         struct.pack("<2d", 0.5, 1e3))
    s["local_f32_u32_i32"] = mha([("NDims", "3"), ("DimSize", "2 2 1"), ("ElementType", "MET_FLOAT"),
                                  ("ElementDataFile", "LOCAL")], f32_data(4))
    s["detached_raw"] = mha(base + [("ElementDataFile", "data.raw")], detached=d48)
    s["detached_headersize"] = mha(base + [("HeaderSize", "5"), ("ElementDataFile", "data.raw")],
                                   detached=b"HEAD!" + d48)
    s["detached_tail"] = mha(base + [("HeaderSize", "-1"), ("ElementDataFile", "data.raw")],
                             detached=b"junk" + d48)
    s["detached_zlib"] = mha([("NDims", "3"), ("CompressedData", "True"), ("CompressedDataSize", str(len(z))),
                              ("DimSize", "4 4 3"), ("ElementType", "MET_UCHAR"), ("ElementDataFile", "data.raw")],
                             detached=z)
    s["bad_missing_dims"] = mha([("NDims", "3"), ("ElementType", "MET_UCHAR"), ("ElementDataFile", "LOCAL")])
    s["bad_4d"] = mha([("NDims", "4"), ("DimSize", "1 1 1 1"), ("ElementType", "MET_UCHAR"),
                       ("ElementDataFile", "LOCAL")], b"x")
    s["bad_type"] = mha([("NDims", "2"), ("DimSize", "1 1"), ("ElementType", "MET_ULONG_LONG"),
                         ("ElementDataFile", "LOCAL")], b"12345678")
    s["bad_list"] = mha([("NDims", "2"), ("DimSize", "1 1"), ("ElementType", "MET_UCHAR"),
                         ("ElementDataFile", "LIST 2D")])
    s["bad_pattern"] = mha([("NDims", "2"), ("DimSize", "1 1"), ("ElementType", "MET_UCHAR"),
                            ("ElementDataFile", "slice%03d.raw 1 2 1")])
    s["bad_huge"] = mha([("NDims", "3"), ("DimSize", "65536 65536 65536"), ("ElementType", "MET_DOUBLE"),
                         ("ElementDataFile", "LOCAL")], b"")
    s["bad_huge_compressed"] = mha([("NDims", "3"), ("CompressedData", "True"), ("DimSize", "1024 1024 512"),
                                    ("ElementType", "MET_FLOAT"), ("ElementDataFile", "LOCAL")], gz(b"\0" * 64))
    s["bad_ascii"] = mha([("NDims", "2"), ("BinaryData", "False"), ("DimSize", "1 1"),
                          ("ElementType", "MET_UCHAR"), ("ElementDataFile", "LOCAL")], b"7")
    s["bad_spacing"] = mha([("NDims", "2"), ("DimSize", "1 1"), ("ElementSpacing", "0 1"),
                            ("ElementType", "MET_UCHAR"), ("ElementDataFile", "LOCAL")], b"7")
    s["bad_twice"] = mha([("NDims", "2"), ("NDims", "2"), ("DimSize", "1 1"), ("ElementType", "MET_UCHAR"),
                          ("ElementDataFile", "LOCAL")], b"7")
    s["bad_no_datafile"] = mha([("NDims", "2"), ("DimSize", "1 1"), ("ElementType", "MET_UCHAR")])
    # the headers of real files (their data is elsewhere)
    s["real_brain_slice"] = (b"ObjectType = Image\nNDims = 2\nBinaryData = True\nBinaryDataByteOrderMSB = False\n"
                             b"CompressedData = False\nTransformMatrix = 1 0 0 1\nOffset = 0 0\n"
                             b"CenterOfRotation = 0 0\nElementSpacing = 1 1\nDimSize = 221 257\n"
                             b"AnatomicalOrientation = ??\nElementType = MET_UCHAR\nElementDataFile = data.raw\n")
    return s


def nrrd(fields, data=b"", detached=None, magic="NRRD0004", comment=True):
    text = magic + "\n" + ("# a comment\nkey:=value\n" if comment else "")
    text += "".join("%s: %s\n" % kv for kv in fields)
    if detached is not None:
        return text.encode() + MARK[1:] + detached
    return text.encode() + b"\n" + data


def nrrd_seeds():
    s = {}
    d48 = u8_data(48)
    s["raw_u8"] = nrrd([("type", "uchar"), ("dimension", "3"), ("sizes", "4 4 3"),
                        ("space directions", "(1,0,0) (0,1,0) (0,0,2)"), ("space origin", "(0,0,0)"),
                        ("encoding", "raw")], d48)
    s["gzip_u8"] = nrrd([("type", "unsigned char"), ("dimension", "3"), ("sizes", "4 4 3"),
                         ("encoding", "gzip")], gz(d48))
    s["raw_f32_little"] = nrrd([("type", "float"), ("dimension", "3"), ("sizes", "2 2 1"), ("endian", "little"),
                                ("spacings", "1 2 3"), ("encoding", "raw")], f32_data(4))
    s["raw_i16_big_2d"] = nrrd([("type", "short"), ("dimension", "2"), ("sizes", "3 2"), ("endian", "big"),
                                ("encoding", "raw")], struct.pack(">6h", -3, -2, -1, 0, 1, 2))
    s["raw_f64"] = nrrd([("type", "double"), ("dimension", "3"), ("sizes", "2 1 1"), ("endian", "little"),
                         ("encoding", "raw")], struct.pack("<2d", 0.5, -7.0))
    s["leading_axis"] = nrrd([("type", "uint16"), ("dimension", "4"), ("sizes", "1 2 2 1"), ("endian", "little"),
                              ("kinds", "vector domain domain domain"), ("encoding", "raw")], u8_data(8))
    s["detached_raw"] = nrrd([("type", "uchar"), ("dimension", "3"), ("sizes", "4 4 3"), ("encoding", "raw"),
                              ("data file", "data.raw")], detached=d48, magic="NRRD0005")
    s["detached_lineskip"] = nrrd([("type", "uchar"), ("dimension", "3"), ("sizes", "4 4 3"), ("encoding", "raw"),
                                   ("line skip", "2"), ("datafile", "data.raw")],
                                  detached=b"line one\nline two\n" + d48)
    s["detached_byteskip_tail"] = nrrd([("type", "uchar"), ("dimension", "3"), ("sizes", "4 4 3"),
                                        ("encoding", "raw"), ("byte skip", "-1"), ("data file", "data.raw")],
                                       detached=b"xyz" + d48)
    s["detached_gzip_byteskip"] = nrrd([("type", "uchar"), ("dimension", "3"), ("sizes", "4 4 3"),
                                        ("encoding", "gz"), ("byte skip", "4"), ("data file", "data.raw")],
                                       detached=gz(b"skip" + d48))
    s["attached_byteskip"] = nrrd([("type", "int8"), ("dimension", "2"), ("sizes", "2 2"), ("byte skip", "2"),
                                   ("encoding", "raw")], b"..abcd")
    s["bad_magic"] = b"NRRD0009\ntype: uchar\ndimension: 2\nsizes: 1 1\nencoding: raw\n\nx"
    s["bad_unknown_field"] = nrrd([("type", "uchar"), ("dimension", "2"), ("sizes", "1 1"), ("frobnitz", "1"),
                                   ("encoding", "raw")], b"x")
    s["bad_ascii"] = nrrd([("type", "uchar"), ("dimension", "2"), ("sizes", "1 1"), ("encoding", "ascii")], b"7\n")
    s["bad_int64"] = nrrd([("type", "int64"), ("dimension", "2"), ("sizes", "1 1"), ("encoding", "raw")],
                          b"12345678")
    s["bad_sizes"] = nrrd([("type", "uchar"), ("dimension", "3"), ("sizes", "4 4"), ("encoding", "raw")], b"")
    s["bad_huge"] = nrrd([("type", "double"), ("dimension", "3"), ("sizes", "65536 65536 65536"),
                          ("encoding", "raw")], b"")
    s["bad_huge_gzip"] = nrrd([("type", "float"), ("dimension", "3"), ("sizes", "1024 1024 512"),
                               ("encoding", "gzip")], gz(b"\0" * 64))
    s["bad_list"] = nrrd([("type", "uchar"), ("dimension", "2"), ("sizes", "1 1"), ("encoding", "raw"),
                          ("data file", "LIST")])
    s["bad_truncated"] = nrrd([("type", "float"), ("dimension", "2"), ("sizes", "2 2"), ("endian", "little"),
                               ("encoding", "raw")], f32_data(3))
    s["real_bucky_header"] = (b"NRRD0004\ntype: unsigned char\ndimension: 3\nsizes: 32 32 32\nspacings: 1 1 1\n"
                              b"encoding: raw\ndata file: data.raw\n")
    return s


def pfm(w, h, scale="-1.0", data=None, sep=b"\n"):
    hdr = b"PF" + sep + ("%d %d" % (w, h)).encode() + sep + scale.encode() + b"\n"
    if data is None:
        n = w * h * 3
        endian = "<" if scale.startswith("-") else ">"
        data = struct.pack(endian + "%df" % n, *[(i % 7) * 0.5 for i in range(n)])
    return hdr + data


def pfm_seeds():
    return {
        "little_2x2": pfm(2, 2),
        "big_1x3": pfm(1, 3, "1.0"),
        "spaces_3x1": pfm(3, 1, "-0.5", sep=b" "),
        "bad_gray": b"Pf\n1 1\n-1.0\n" + b"\0" * 4,
        "bad_zero_scale": pfm(1, 1, "0", data=b"\0" * 12),
        "bad_size": pfm(70000, 1, data=b""),
        "bad_short": pfm(2, 2)[:-1],
        "bad_long": pfm(1, 1) + b"!",
        "bad_two_spaces": b"PF\n1 1\n-1.0\n\n" + b"\0" * 12,
    }


def env_map_seeds():
    def grey(w, h, vals, scale="-1.0"):
        endian = "<" if scale.startswith("-") else ">"
        return b"Pf\n" + ("%d %d" % (w, h)).encode() + b"\n" + scale.encode() + b"\n" + struct.pack(
            endian + "%df" % len(vals), *vals)
    return {
        "colour_2x2": pfm(2, 2),
        "colour_big_4x2": pfm(4, 2, "1.0"),
        "grey_3x2": grey(3, 2, [0.0, 1.0, 2.0, 3.0, 0.5, 0.25]),
        "grey_big_1x1": grey(1, 1, [7.0], "1.0"),
        "black_2x1": pfm(2, 1, data=b"\0" * 24),
        "spot_4x2": pfm(4, 2, data=struct.pack("<24f", *([0.0] * 9 + [100.0] * 3 + [0.0] * 12))),
        "bad_negative": pfm(1, 1, data=struct.pack("<3f", 1.0, -1.0, 1.0)),
        "bad_nan": pfm(1, 1, data=struct.pack("<3f", 1.0, float("nan"), 1.0)),
        "bad_inf": grey(1, 1, [float("inf")]),
        "bad_grey_short": grey(2, 2, [1.0, 1.0, 1.0]),
    }


def config_seeds():
    names = ["naiveSK", "naiveMK", "regenerationSK", "regenerationSK-thread", "regenerationSK-warp",
             "regenerationSK-block", "streamingSK", "streamingMK", "streamingSK-morton", "sortingSK"]
    s = {n: n.encode() for n in names}
    s["canonical"] = (b"regen=block,reorder=compact,kernels=single,maxrregcount=64,ppt=1,block=256,grid=0,"
                      b"threshold=0,sortkey=position")
    s["override"] = b"streamingSK,block=128,maxrregcount=64"
    s["morton_termination"] = b"sortingSK,sortkey=termination,ppt=4,block=1024,grid=8,threshold=50"
    s["multi"] = b"regen=device,reorder=compact,kernels=multi"
    s["bad_block"] = b"streamingSK,block=100"
    s["bad_key"] = b"naiveSK,blocks=64"
    s["bad_twice"] = b"ppt=1,ppt=2"
    s["bad_rule"] = b"regen=warp,reorder=compact"
    s["bad_space"] = b"naiveSK, block=64"
    s["empty"] = b""
    s["estimator"] = b"regenerationSK-warp,lookahead=4,coop=4,majorant=grid8,density=u8"
    s["bad_majorant"] = b"naiveSK,majorant=grid5"
    s["bad_density"] = b"naiveSK,density=f64"
    s["volume_sparse"] = b"regenerationSK-warp,lookahead=4,majorant=grid8,volume=sparse"
    s["bad_volume"] = b"naiveSK,volume=tiles"
    s["flights_async"] = b"regenerationSK-warp,threshold=50,lookahead=2,flights=async,majorant=grid32,density=u8"
    s["bad_flights_rule"] = b"regenerationSK-block,flights=async"
    s["paths_pixel"] = b"regenerationSK-thread,paths=pixel,majorant=grid32,density=u8"
    s["transmittance"] = b"regenerationSK-warp,threshold=75,majorant=skip,density=u8,transmittance=residual"
    s["bad_transmittance"] = b"naiveSK,transmittance=shadow"
    return s


def estimator_seeds():
    return {"all": b"all", "global": b"global", "list": b"global:f32,grid8:u8,grid32:f16",
            "no_colon": b"grid8", "twice": b"grid8:u8,grid8:u8", "bad_names": b"grid9:u12", "empty": b"",
            "trailing_comma": b"grid4:u16,",
            "sparse": b"global:f32,global:f32:sparse,grid8:u8:dense"}


def sequence_seeds():
    cfg = b'"regen=warp,reorder=none,kernels=single,maxrregcount=64,ppt=1,block=256,grid=0,threshold=100,' \
          b'sortkey=position,lookahead=4"'
    row = (b'{"kind":"sequence","scene":"manix","tuner":"kernel_tuner 1.5.0","strategy":"mls","seed":3,'
           b'"configs":[' + cfg + b',"regenerationSK","streamingSK,block=128,majorant=grid8,density=u8"]}')
    return {
        "two_runs": row + b"\n" + row.replace(b'"seed":3', b'"seed":4') + b"\n",
        "other_kinds": b'{"kind":"note","text":"skipped"}\n\n' + row + b"\n",
        "empty_run": b'{"kind":"sequence","scene":"s","tuner":"t","strategy":"x","seed":0,"configs":[]}\n',
        "bad_config": row.replace(b"regenerationSK", b"regen=thread,threshold=50"),
        "bad_seed": row.replace(b'"seed":3', b'"seed":-3'),
        "bad_json": row[:50],
        "no_kind": b'{"scene":"manix"}\n',
        "long_name": row.replace(b'"mls"', b'"' + b"m" * 80 + b'"'),
        "empty": b"",
    }


def gpus_seeds():
    return {"all": b"all", "list": b"0,1,2,3", "one": b"7", "unordered": b"3,0", "twice": b"1,1",
            "empty_item": b"0,,1", "trailing_comma": b"0,", "out_of_range": b"64", "sign": b"-1", "word": b"ALL",
            "empty": b"", "long": b"0001"}


def number_seeds():
    return {
        "ints": b"0\n1\n-1\n+7\n2147483647\n-2147483648\n9223372036854775807\n-9223372036854775808\n16777216",
        "bad_ints": b"\n 1\n1 \n0x10\n1e3\n99999999999999999999\n--1\n1-",
        "doubles": b"0.5\n-1e30\n1e-4\n3.4028235e38\n1.7976931348623157e308\n4.9e-324\n.5\n5.\n-0",
        "bad_doubles": b"nan\ninf\n-inf\n1e400\n1.0.0\n0x1p3\n1,5",
        "vec3": b"1,2,3\n1 2 3\n-1e30,0,1e30\n 1\t2 3 \n1,2\n1,2,3,4\n1,,3",
        "durations": b"90s\n2m\n500ms\n1.5h\n3min\n10\n0s\n-1s\n1e308h\n5d\nms",
    }


def results_seeds():
    row = b'{"schema":"vptune.result/1","scene":"manix","status":"ok","metrics":{"time_ms":1.5,"reps":10}}'
    return {
        "two_rows": row + b"\n" + row.replace(b"ok", b"timeout") + b"\n",
        "blank_lines": b"\n  \n" + row + b"\n\r\n",
        "truncated_tail": row + b"\n" + row[:40],
        "only_truncated": row[:20],
        "empty": b"",
        "bad_not_object": b"[1,2,3]\n",
        "bad_json": row + b"\n{\"a\":\n",
        "unicode": b'{"scene":"\\u00e9\\ud83d\\ude00","x":1e308,"y":-0}\n',
        "nested": b'{"a":{"b":{"c":[1,[2,[3,{"d":null}]]]}}}\n',
    }


def tuner_cache_seeds(bench_rows):
    header = (b'{"kind":"header","schema":"vptune.tune/1","gpu":{"name":"NVIDIA H100 80GB HBM3",'
              b'"uuid":"GPU-437ab01b"},"driver":"580.159.04","nvrtc":"13.0","commit":"b07d5f88bf82",'
              b'"scene":"manix","workload":{"width":400,"height":400,"spp":100,"seed":1,"max_depth":0,'
              b'"rr_depth":-1}}')

    def ev(cfg, status=b"ok", fid=1, t=b"12.5"):
        m = b'{"time_ms":' + t + b',"registers":64,"occupancy_achieved":0.5}' if status == b"ok" else b"{}"
        return (b'{"kind":"eval","config":"' + cfg + b'","schedule":"x","fidelity":' + str(fid).encode() +
                b',"status":"' + status + b'","reason":"","cost_s":1.9,"metrics":' + m +
                b',"time":"2026-11-21T06:18:38Z"}')
    rows = [ev(b"streamingSK,block=128"), ev(b"naiveSK", fid=0), ev(b"sortingSK,ppt=2", b"timeout"),
            ev(b"regenerationSK-warp,threshold=50", b"compile")]
    # a tune on several GPUs names who measured each row (tuner/rows.h)
    by = b',"measured_by":{"gpu":"GPU-437ab01c","host":"node2","rank":1},"time"'
    measured = [rows[0].replace(b',"time"', by), rows[1].replace(b',"time"', by.replace(b',"rank":1', b''))]
    s = {
        "cache_rows": b"\n".join([header] + rows) + b"\n",
        "cache_header_only": header + b"\n",
        "cache_tail_without_newline": b"\n".join([header] + rows[:2]) + b"\n" + rows[2],
        "cache_cut_tail": b"\n".join([header] + rows[:2]) + b"\n" + rows[2][:50],
        "cache_cut_header": header[:60],
        "bad_cache_second_header": b"\n".join([header, rows[0], header]) + b"\n",
        "bad_cache_status": header + b"\n" + rows[0].replace(b'"ok"', b'"great"') + b"\n",
        "bad_cache_schema": header.replace(b"tune/1", b"tune/9") + b"\n",
        # the volume of issue 17 (headers before it have none)
        "cache_header_volume": header[:-1] + b',"volume":{"dims":[1024,1024,432],"format":"i16","bytes":906002432,'
                               b'"source":"cranium.mhd","sha256":"' + b"ab" * 32 + b'","resample":"up4"}}\n' +
                               b"\n".join(rows) + b"\n",
        "bad_cache_volume": header[:-1] + b',"volume":[1024,1024,432]}\n',
        "cache_measured_by": b"\n".join([header] + measured) + b"\n",
        "bad_cache_measured_by": header + b"\n" + measured[0].replace(b'"rank":1', b'"rank":-1') + b"\n",
        # one config twice: the same measurement (a resumed run's repeat) is
        # fine, another one refused naming both lines (tuner/cache.h)
        "cache_identical_repeat": b"\n".join([header] + rows + [rows[0].replace(b"06:18:38", b"07:00:00")]) + b"\n",
        "bad_cache_conflict": b"\n".join([header] + rows + [ev(b"streamingSK,block=128", t=b"13.5")]) + b"\n",
        "empty": b"",
    }
    if bench_rows:
        s["replay_bench_rows"] = b"".join(bench_rows)
        # a recording with a row twice: the same measurement, then another
        s["replay_bench_rows_repeat"] = b"".join(bench_rows) + bench_rows[-1]
        s["bad_replay_bench_rows_conflict"] = b"".join(bench_rows) + bench_rows[-1].replace(b'"time_ms":', b'"time_ms":1', 1)
        # a recording committed gzipped (tests/fixtures/tuner/sampled/): the
        # replay inflates it; cut short, it must be refused
        gz = gzip.compress(b"".join(bench_rows), 9, mtime=0)
        s["replay_bench_rows_gzip"] = gz
        s["replay_bench_rows_gzip_cut"] = gz[:len(gz) // 2]
    return s


def bench_result_rows(path, n):
    """The first n rows of kind "result" (and one roofline row) of a bench file."""
    try:
        with open(path, "rb") as f:
            lines = f.readlines()
    except OSError:
        return []
    out = [l for l in lines if b'"kind":"roofline"' in l][:1]
    out += [l for l in lines if b'"kind":"result"' in l][:n]
    return out


def experiment_spec_seeds(spec_dir):
    """The committed experiment specs, and a few near the checks."""
    s = {}
    for fn in sorted(os.listdir(spec_dir)) if os.path.isdir(spec_dir) else []:
        if fn.endswith(".spec"):
            with open(os.path.join(spec_dir, fn), "rb") as f:
                s["spec_" + fn[:-5]] = f.read()
    s["small_bench"] = (b"name = small\ntitle = Small\nscenes = bucky manix\nconfigs = naiveSK streamingSK,block=128\n"
                        b"workload = width=64 height=64 spp=4 seed=1\nworkload.bucky = spp=8\n"
                        b"cpu_reference = yes\ncpu_workload = spp=2\nsweep = max_depth=1,2\n")
    s["small_space"] = (b"name = space\ntitle = Space\nscenes = bucky\n"
                        b"space = schedule=naiveSK,streamingSK; block=64,128; maxrregcount=0,255\n"
                        b"workload = width=8 height=8 spp=1 seed=1\n")
    s["bad_no_title"] = b"name = x\nscenes = bucky\nconfigs = naiveSK\nworkload = width=8 height=8 spp=1 seed=1\n"
    s["bad_config"] = (b"name = x\ntitle = X\nscenes = bucky\nconfigs = naiveSK,block=100\n"
                       b"workload = width=8 height=8 spp=1 seed=1\n")
    s["bad_workload"] = b"name = x\ntitle = X\nscenes = bucky\nconfigs = naiveSK\nworkload = width=8 depth=2\n"
    return s


MTS3_SCENE = b"""<?xml version="1.0" encoding="utf-8"?>
<!-- as the export of bin/render writes it -->
<scene version="3.0.0">
    <default name="spp" value="100"/>
    <default name="resx" value="400"/>
    <default name="resy" value="400"/>
    <integrator type="volpath">
        <integer name="max_depth" value="-1"/>
        <integer name="rr_depth" value="1073741824"/>
    </integrator>
    <sensor type="perspective">
        <string name="fov_axis" value="x"/>
        <float name="fov" value="0.7"/>
        <float name="near_clip" value="0.01"/>
        <float name="far_clip" value="10000"/>
        <transform name="to_world">
            <lookat origin="0, 0, 100" target="0, 0, 0" up="0, 1, 0"/>
        </transform>
        <sampler type="independent">
            <integer name="sample_count" value="$spp"/>
        </sampler>
        <film type="hdrfilm">
            <integer name="width" value="$resx"/>
            <integer name="height" value="$resy"/>
            <string name="pixel_format" value="rgb"/>
            <string name="component_format" value="float32"/>
            <rfilter type="box"/>
        </film>
    </sensor>
    <emitter type="constant">
        <rgb name="radiance" value="1, 1, 1"/>
    </emitter>
    <medium type="heterogeneous" id="medium">
        <volume name="sigma_t" type="gridvolume">
            <string name="filename" value="bucky_density.vol"/>
            <transform name="to_world">
                <scale value="1, 1, 1"/>
                <translate value="-0.5, -0.5, -0.5"/>
            </transform>
        </volume>
        <float name="scale" value="40"/>
        <volume name="albedo" type="gridvolume">
            <string name="filename" value="bucky_albedo.vol"/>
            <transform name="to_world">
                <matrix value="1 0 0 -0.5  0 1 0 -0.5  0 0 1 -0.5  0 0 0 1"/>
            </transform>
        </volume>
        <phase type="hg"><float name="g" value="0.3"/></phase>
        <boolean name="sample_emitters" value="false"/>
    </medium>
    <shape type="cube">
        <transform name="to_world">
            <scale value="0.5, 0.5, 0.5"/>
            <translate value="0, 0, 0"/>
        </transform>
        <bsdf type="roughdielectric">
            <string name="distribution" value="ggx"/>
            <float name="alpha" value="0.1"/>
            <float name="int_ior" value="1.05"/>
            <float name="ext_ior" value="1.01"/>
            <boolean name="sample_visible" value="true"/>
        </bsdf>
        <ref name="interior" id="medium"/>
    </shape>
</scene>
"""

THESIS_SCENE = b"""<?xml version='1.0' encoding='utf-8'?>
<scene version="0.5.0">
	<integrator type="volpath">
		<integer name="maxDepth" value="10000000"/>
		<integer name="rrDepth" value="1000000"/>
	</integrator>
	<sensor type="perspective" id="main">
		<float name="nearClip" value="1"/>
		<float name="farClip" value="100.0"/>
		<float name="fov" value="0.7"/>
		<transform name="toWorld">
			<lookat target="0.0, 0.0, 0.0" origin="0.0, 0.0, 100" up="0, 1, 0"/>
		</transform>
		<sampler type="independent"><integer name="sampleCount" value="100"/></sampler>
		<film type="hdrfilm">
			<integer name="height" value="400"/><integer name="width" value="400"/>
			<rfilter type="box" /><boolean name="banner" value="false"/>
		</film>
	</sensor>
	<emitter type="constant" id="Env"><spectrum name="radiance" value="1"/></emitter>
	<medium type="heterogeneous" id="Printout">
		<string name="method" value="woodcock"/>
		<volume name="density" type="gridvolume"><string name="filename" value="density.vol"/></volume>
		<float name="scale" value="100" />
		<volume name="albedo" type="gridvolume"><string name="filename" value="albedo.vol"/></volume>
		<phase type="hg"><float name="g" value="0.0" /></phase>
	</medium>
	<bsdf type="roughdielectric" id="Capsule">
		<string name="distribution" value="ggx"/>
		<float name="alpha" value="0.1"/>
		<float name="extIOR" value="1.01"/>
		<float name="intIOR" value="1.05"/>
		<boolean name="sampleVisible" value="true" />
	</bsdf>
	<shape type="obj">
		<string name="filename" value="bounds.obj"/>
		<ref id="Capsule"/>
		<ref name="interior" id="Printout"/>
	</shape>
</scene>
"""


def mitsuba_xml_seeds():
    """Scene files for vpt_mitsuba_parse: the export's form, the thesis'
    Mitsuba 0.5 form, variations, and errors near different checks."""
    s = {}
    s["export_v3"] = MTS3_SCENE
    s["thesis_v05"] = THESIS_SCENE
    a0 = MTS3_SCENE.index(b'        <volume name="albedo"')
    a1 = MTS3_SCENE.index(b"</volume>", a0) + len(b"</volume>")
    b0 = MTS3_SCENE.index(b"        <bsdf")
    b1 = MTS3_SCENE.index(b"</bsdf>", b0) + len(b"</bsdf>")
    s["smooth_const_albedo"] = (MTS3_SCENE[:a0] + b'        <rgb name="albedo" value="0.5, 0.25, 1"/>' +
                                MTS3_SCENE[a1:b0] + b'        <bsdf type="dielectric"/>' + MTS3_SCENE[b1:])
    s["null_bsdf"] = MTS3_SCENE[:b0] + b'        <bsdf type="null"/>' + MTS3_SCENE[b1:]
    s["fov_y_obj"] = MTS3_SCENE.replace(b'value="x"', b'value="y"').replace(
        b'<shape type="cube">', b'<shape type="obj"><string name="filename" value="b.obj"/>')
    e1 = MTS3_SCENE.index(b"</emitter>") + len(b"</emitter>")
    sun = (b'\n    <emitter type="directional">\n        <vector name="direction" value="-0.3, -1, -0.2"/>\n'
           b'        <rgb name="irradiance" value="3, 2.9, 2.7"/>\n    </emitter>')
    s["sun_null_bsdf"] = s["null_bsdf"][:e1] + sun + s["null_bsdf"][e1:]
    s["sun_xyz_float"] = (MTS3_SCENE[:e1] + b'<emitter type="directional"><vector name="direction" x="1" z="-2"/>'
                          b'<float name="irradiance" value="5"/></emitter>' + MTS3_SCENE[e1:])
    s["sun_default"] = MTS3_SCENE[:e1] + b'<emitter type="directional"/>' + MTS3_SCENE[e1:]
    s["bad_two_suns"] = MTS3_SCENE[:e1] + sun + sun + MTS3_SCENE[e1:]
    s["bad_sun_zero"] = MTS3_SCENE[:e1] + sun.replace(b"-0.3, -1, -0.2", b"0, 0, 0") + MTS3_SCENE[e1:]
    s["bad_malformed"] = MTS3_SCENE[:900]
    s["bad_doctype"] = b'<!DOCTYPE scene [<!ENTITY x "y">]><scene version="3.0.0">&x;</scene>'
    s["bad_plugin"] = MTS3_SCENE.replace(b'<bsdf type="roughdielectric">', b'<bsdf type="plastic">')
    s["bad_property"] = MTS3_SCENE.replace(b'<float name="alpha"', b'<float name="alphax"')
    s["bad_param"] = MTS3_SCENE.replace(b"$spp", b"$samples")
    s["bad_no_bsdf"] = MTS3_SCENE[:b0] + MTS3_SCENE[b1:]
    s["bad_camel_case_v3"] = THESIS_SCENE.replace(b'version="0.5.0"', b'version="3.0.0"')
    s["bad_gaussian"] = MTS3_SCENE.replace(b'<rfilter type="box"/>', b'<rfilter type="gaussian"/>')
    s["bad_version"] = MTS3_SCENE.replace(b'version="3.0.0"', b'version="1.0"')
    return s


def scene_args_seeds():
    """Command lines for the scene-option parser, arguments split by NUL."""
    lines = {
        "scene": ["--scene", "manix"],
        "scenes": ["--scene", "bucky", "--scene=smoke", "--volume", "a b'c.mhd", "--like", "manix"],
        "volume": ["--volume", "head.mha", "--like", "manix", "--downsample", "2", "--upsample", "3",
                   "--transfer", "linear"],
        "raw": ["--volume=v.raw", "--dims", "4,5,6", "--type=i16", "--transfer=ct", "--print-scene"],
        "scene_file": ["--scene-file", "s.xml", "-o", "x.png"],
        "folder": ["--volume", "ct/series//", "--like=smoke"],
        "bad_missing": ["--volume"],
        "bad_flag_value": ["--volume", "--like", "manix"],
        "bad_dims": ["--volume", "v.raw", "--dims", "1,2,3,4"],
        "bad_like": ["--scene", "manix", "--like", "smoke"],
        "medium": ["--scene", "smoke", "--density-scale", "50", "--albedo=0.8", "--g", "0.877"],
        "medium_rgb": ["--volume", "c.nvdb", "--albedo", "1,0.5,0.25", "--g=-0.3", "--density-scale=1e-3"],
        "bad_medium": ["--scene", "smoke", "--g", "1", "--albedo", "0.5,0.5", "--density-scale", "-2"],
        "light": ["--scene", "smoke", "--sun", "0.3,1,0.2", "--sun-irradiance=1,0.9,0.8", "--sun-radius", "0.27",
                  "--env=0.05,0.08,0.15"],
        "light_negative": ["--volume", "c.vdb", "--sun=-1,-0,2e-5", "--env", "-0"],
        "bad_light": ["--scene", "smoke", "--sun-radius", "46", "--sun", "0,0,0", "--sun-irradiance", "1,2"],
    }
    return {k: b"\0".join(a.encode() for a in v) for k, v in lines.items()}


def dicom_seeds(fixtures):
    """The committed DICOM fixtures (tests/fixtures/dicom, written by its
    make_fixtures.py with pydicom): a multi-frame file, one slice, and the
    slice cut short (pixel data shorter than its header says)."""
    s = {}
    with open(os.path.join(fixtures, "multiframe.dcm"), "rb") as f:
        s["multiframe.dcm"] = f.read()
    with open(os.path.join(fixtures, "series", "IM0"), "rb") as f:
        s["slice.dcm"] = f.read()
    s["bad_truncated.dcm"] = s["slice.dcm"][:-7]
    return s


def vdb_seeds(fixtures):
    """The committed .vdb fixtures (tests/fixtures/vdb, written by its
    make_fixtures.cc with OpenVDB): density and albedo grids (Blosc and zlib),
    a file whose float grid is not named "density", one without a float grid,
    albedo grids out of range or in another index space, and the cloud cut
    short."""
    s = {}
    for fn in ("cloud.vdb", "cloud_zip.vdb", "smoke.vdb", "no_float.vdb", "bad_albedo.vdb", "moved_albedo.vdb"):
        with open(os.path.join(fixtures, fn), "rb") as f:
            s[fn] = f.read()
    s["bad_truncated.vdb"] = s["cloud_zip.vdb"][: len(s["cloud_zip.vdb"]) // 2]
    return s


def write(root, target, seeds):
    d = os.path.join(root, target)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    for name, data in sorted(seeds.items()):
        with open(os.path.join(d, name), "wb") as f:
            f.write(data)


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "fuzz/corpus"
    write(root, "volume_mitsuba", mitsuba())
    write(root, "volume_metaimage", metaimage())
    write(root, "volume_nrrd", nrrd_seeds())
    write(root, "pfm", pfm_seeds())
    write(root, "env_map", env_map_seeds())
    write(root, "config", config_seeds())
    write(root, "estimators", estimator_seeds())
    write(root, "tuner_sequences", sequence_seeds())
    write(root, "gpus", gpus_seeds())
    write(root, "parse_numbers", number_seeds())
    write(root, "results_load", results_seeds())
    write(root, "mitsuba_xml", mitsuba_xml_seeds())
    here = os.path.dirname(os.path.abspath(__file__))
    # real bench rows (the tuner's recorded H100 space), not results/: those move
    bench = os.path.join(here, "..", "tests", "fixtures", "tuner", "manix_exhaustive.jsonl")
    write(root, "tuner_cache", tuner_cache_seeds(bench_result_rows(bench, 3)))
    write(root, "experiment_spec", experiment_spec_seeds(os.path.join(here, "..", "experiments")))
    write(root, "scene_args", scene_args_seeds())
    write(root, "volume_dicom", dicom_seeds(os.path.join(here, "..", "tests", "fixtures", "dicom")))
    write(root, "volume_vdb", vdb_seeds(os.path.join(here, "..", "tests", "fixtures", "vdb")))


if __name__ == "__main__":
    main()
