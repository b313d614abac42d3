#!/usr/bin/env python3
"""Tests of the Mitsuba interoperability on the Python side (run by
tests/test_mitsuba.c, or directly: python3 experiments/test_mitsuba.py).

  StatsTest        experiments/mitsuba_compare.py: distributions against
                   known values, PFM reading, calibration of the per-pixel and
                   block tests on synthetic images, float-rounding tolerance.
  ExportXmlTest    bin/render --export-mitsuba: the XML, read with Python's
                   own parser (xml.etree), says the scene's parameters.
  MitsubaLoadTest  the same XML loaded by the mitsuba package (scalar_rgb:
                   no LLVM or GPU needed) has those parameters inside
                   Mitsuba, and renders; skipped, with the reason, when
                   mitsuba is not importable.

bin/render is found in $VPT_BIN_DIR, else ROOT/bin.
"""

import array
import math
import os
import random
import subprocess
import sys
import tempfile
import unittest
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.dont_write_bytecode = True
sys.path.insert(0, HERE)
import mitsuba_compare as mc  # noqa: E402

BIN = os.environ.get("VPT_BIN_DIR") or os.path.join(ROOT, "bin")


def export(scene, out_dir, *flags):
    xml = os.path.join(out_dir, scene + ".xml")
    render = os.path.join(BIN, "render")
    if not os.access(render, os.X_OK):
        raise unittest.SkipTest("%s is not built" % render)
    subprocess.run([render, "--scene", scene, "--export-mitsuba", xml, "--quiet"] + list(flags), check=True)
    return xml


class StatsTest(unittest.TestCase):
    def test_t_distribution(self):
        # two-sided 5% points of Student's t
        for t, nu in ((12.706, 1), (2.776, 4), (2.145, 14), (1.960, 1e7)):
            self.assertAlmostEqual(mc.t_two_sided_p(t, nu), 0.05, delta=2e-4)
        self.assertAlmostEqual(mc.t_two_sided_p(0.0, 5), 1.0, places=12)
        self.assertLess(mc.t_two_sided_p(40.0, 14), 1e-14)
        self.assertEqual(mc.t_two_sided_p(float("inf"), 14), 0.0)

    def test_normal_and_chi2(self):
        self.assertAlmostEqual(mc.z_of_two_sided_p(0.05), 1.959964, places=5)
        self.assertAlmostEqual(mc.z_of_two_sided_p(1e-20), 9.336045, places=3)  # mpmath
        self.assertEqual(mc.z_of_two_sided_p(1.0), 0.0)
        self.assertAlmostEqual(mc.chi2_sf(1000.0, 1000), 0.4941, delta=2e-3)   # exact: 0.4941
        self.assertAlmostEqual(mc.chi2_sf(1106.0, 1000), 0.0104, delta=1e-3)
        self.assertAlmostEqual(mc.binomial_upper_p(100, 10000, 0.01), 0.5, delta=0.03)

    def test_read_pfm_top_row_first(self):
        with tempfile.TemporaryDirectory() as d:
            p = os.path.join(d, "a.pfm")
            rows = [[(1.0, 2.0, 3.0), (4.0, 5.0, 6.0)], [(7.0, 8.0, 9.0), (10.0, 11.0, 12.0)]]  # top, bottom
            with open(p, "wb") as f:
                f.write(b"PF\n2 2\n-1.0\n")
                for r in reversed(rows):  # PFM: bottom row first
                    f.write(array.array("f", [c for px in r for c in px]).tobytes())
            w, h, rgb = mc.read_pfm(p)
            self.assertEqual((w, h), (2, 2))
            self.assertEqual(list(rgb[:6]), [1, 2, 3, 4, 5, 6])
            with open(p, "wb") as f:
                f.write(b"PF\n2 2\n-1.0\n" + b"\0" * 40)
            self.assertRaises(mc.PfmError, mc.read_pfm, p)

    def synthetic(self, k, n, spp, shift=0.0, seed=1):
        rng = random.Random(seed)
        probs = [rng.choice((0.01, 0.05, 0.3, 0.5, 0.8, 0.97)) for _ in range(n)]
        def one():
            return array.array("d", (sum(rng.random() < min(1.0, p + shift) for _ in range(spp)) / spp for p in probs))
        return [one() for _ in range(k)], [one() for _ in range(k)]

    def test_same_distribution_agrees(self):
        a, b = self.synthetic(8, 4096, 16)
        c = mc.compare(a, b, 64)
        self.assertTrue(mc.verdict(c), c)
        self.assertLess(abs(c["fraction_failed"] - 0.01), 0.01)
        self.assertGreater(c["block_chi2_p"], 1e-3)
        self.assertAlmostEqual(c["relmse_between_means"] / c["relmse_between_expected"], 1.0, delta=0.15)

    def test_a_bias_is_found(self):
        a, _ = self.synthetic(8, 4096, 16)
        _, b = self.synthetic(8, 4096, 16, shift=0.02, seed=2)
        c = mc.compare(a, b, 64)
        self.assertFalse(mc.verdict(c))
        self.assertLess(c["image_mean"]["p"], 1e-6)

    def test_float_rounding_is_equal(self):
        one = array.array("d", [1.0] * 64)
        ulp = array.array("d", [1.0 + 2.0 ** -23] * 64)
        c = mc.compare([one, ulp, one], [one, one, one], 8)
        self.assertEqual(c["pixels_constant_equal"], 64)
        self.assertEqual(c["pixels_tested"], 0)
        self.assertTrue(mc.verdict(c))

    def test_relmse(self):
        self.assertAlmostEqual(mc.relmse([0.0, 1.0], [0.01, 0.0]), 0.5)


class ExportXmlTest(unittest.TestCase):
    def test_manix_parameters(self):
        with tempfile.TemporaryDirectory() as d:
            xml = export("manix", d, "--width", "64", "--height", "32", "--spp", "5")
            root = ET.parse(xml).getroot()
            self.assertEqual(root.tag, "scene")
            self.assertEqual(root.get("version"), "3.0.0")
            defaults = {e.get("name"): e.get("value") for e in root.findall("default")}
            self.assertEqual(defaults, {"spp": "5", "resx": "64", "resy": "32"})

            def prop(parent, tag, name):
                e = [x for x in parent.findall(tag) if x.get("name") == name]
                self.assertEqual(len(e), 1, (tag, name))
                return e[0].get("value")

            integ = root.find("integrator")
            self.assertEqual(integ.get("type"), "volpath")
            self.assertEqual(prop(integ, "integer", "max_depth"), "-1")
            self.assertGreaterEqual(int(prop(integ, "integer", "rr_depth")), 1 << 30)
            sensor = root.find("sensor")
            self.assertEqual(sensor.get("type"), "perspective")
            self.assertEqual(float(prop(sensor, "float", "fov")), 0.7)
            self.assertEqual(prop(sensor, "string", "fov_axis"), "x")
            look = sensor.find("transform/lookat")
            self.assertEqual([float(x) for x in look.get("origin").split(",")], [0, 0, 100])
            self.assertEqual([float(x) for x in look.get("target").split(",")], [0, 0, 0])
            self.assertEqual([float(x) for x in look.get("up").split(",")], [0, 1, 0])
            self.assertEqual(sensor.find("film/rfilter").get("type"), "box")
            self.assertEqual(sensor.find("sampler").get("type"), "independent")
            self.assertEqual(prop(root.find("emitter"), "rgb", "radiance"), "1, 1, 1")
            med = root.find("medium")
            self.assertEqual(med.get("type"), "heterogeneous")
            self.assertEqual(float(prop(med, "float", "scale")), 100.0)
            self.assertEqual(prop(med, "boolean", "sample_emitters"), "false")
            self.assertEqual(med.find("phase").get("type"), "isotropic")
            grids = {v.get("name"): v for v in med.findall("volume")}
            self.assertEqual(set(grids), {"sigma_t", "albedo"})
            for v in grids.values():
                self.assertEqual(v.get("type"), "gridvolume")
                self.assertTrue(os.path.exists(os.path.join(d, prop(v, "string", "filename"))))
                self.assertEqual(v.find("transform/scale").get("value"), "1, 0.8984375, 1")
                self.assertEqual(v.find("transform/translate").get("value"), "-0.5, -0.44921875, -0.5")
            shape = root.find("shape")
            self.assertEqual(shape.get("type"), "cube")
            self.assertEqual(shape.find("transform/scale").get("value"), "0.5, 0.44921875, 0.5")
            bsdf = shape.find("bsdf")
            self.assertEqual(bsdf.get("type"), "roughdielectric")
            self.assertEqual(prop(bsdf, "string", "distribution"), "ggx")
            self.assertEqual(float(prop(bsdf, "float", "alpha")), 0.1)
            self.assertEqual(float(prop(bsdf, "float", "int_ior")), 1.05)
            self.assertEqual(float(prop(bsdf, "float", "ext_ior")), 1.01)
            self.assertEqual(shape.find("ref").get("id"), med.get("id"))

    def test_smoke_is_index_matched(self):
        with tempfile.TemporaryDirectory() as d:
            root = ET.parse(export("smoke", d)).getroot()
            self.assertEqual(root.find("shape/bsdf").get("type"), "null")
            self.assertEqual([e.get("name") for e in root.findall("medium/rgb")], ["albedo"])


def mitsuba_or_skip():
    try:
        import mitsuba as mi
    except Exception as e:  # noqa: BLE001 - any failure to import is a reason to skip
        raise unittest.SkipTest("the mitsuba package is not importable (%s: %s)" % (type(e).__name__, e))
    mi.set_variant("scalar_rgb")
    return mi


class DisneyCloudSceneTest(unittest.TestCase):
    """scripts/disney_cloud_scene.py on a volume with a frame of its own
    (a MetaImage grid with spacing and offset, in place of the cloud's
    .vdb): pbrt's camera, lights and medium land in the scene's frame, and
    vptune reads the file back with its sun."""

    def test_pbrt_camera_lights_and_medium_in_the_scenes_frame(self):
        render = os.path.join(BIN, "render")
        if not os.access(render, os.X_OK):
            raise unittest.SkipTest("%s is not built" % render)
        script = os.path.join(ROOT, "scripts", "disney_cloud_scene.py")
        with tempfile.TemporaryDirectory() as d:
            mhd = os.path.join(d, "c.mhd")
            vals = array.array("f", [((i * 7) % 11) / 10.0 for i in range(8 * 6 * 10)])
            with open(mhd, "wb") as f:
                f.write(b"ObjectType = Image\nNDims = 3\nDimSize = 8 6 10\nElementSpacing = 2 2 2\n"
                        b"Offset = 10 -4 3\nElementType = MET_FLOAT\nElementDataFile = LOCAL\n" + vals.tobytes())
            xml = os.path.join(d, "cloud.xml")
            p = subprocess.run([sys.executable, script, mhd, xml, "--width", "16", "--height", "9", "--spp", "2",
                                "--bin", BIN], capture_output=True, text=True)
            self.assertEqual(p.returncode, 0, p.stderr)
            root = ET.parse(xml).getroot()
            # world box [9, 25] x [-5, 7] x [2, 22]: centre (17, 1, 12), largest side 20
            look = root.find("sensor/transform/lookat")
            eye = [float(x) for x in look.get("origin").split(",")]
            target = [float(x) for x in look.get("target").split(",")]
            for got, want in zip(eye + target, [(648.064 - 17) / 20, (-82.473 - 1) / 20, (-63.856 - 12) / 20,
                                                (6.021 - 17) / 20, (100.043 - 1) / 20, (-43.679 - 12) / 20]):
                self.assertAlmostEqual(got, want, places=5)
            fov = float(root.find("sensor/float[@name='fov']").get("value"))
            want_fov = math.degrees(2 * math.atan(math.tan(math.radians(31.07 / 2)) * 16 / 9))
            self.assertAlmostEqual(fov, want_fov, places=4)
            self.assertAlmostEqual(float(root.find("medium/float[@name='scale']").get("value")), 80.0, places=4)
            self.assertEqual(root.find("medium/boolean[@name='sample_emitters']").get("value"), "true")
            self.assertEqual(root.find("medium/phase/float[@name='g']").get("value"), "0.877")
            sun = root.find("emitter[@type='directional']")
            self.assertEqual(sun.find("vector").get("value"), "-0.5826, -0.766, -0.2717")
            self.assertEqual(sun.find("rgb").get("value"), "2.6, 2.5, 2.3")
            self.assertEqual(root.find("emitter[@type='constant']/rgb").get("value"), "0.03, 0.07, 0.23")
            # vptune reads it back: the sun is on (the digest differs from the file without it) and it renders
            p = subprocess.run([render, "--scene-file", xml, "--print-scene"], capture_output=True, text=True)
            self.assertEqual(p.returncode, 0, p.stderr)
            with open(xml) as f:
                text = f.read()
            nosun = os.path.join(d, "nosun.xml")
            with open(nosun, "w") as f:
                f.write(text.replace('<emitter type="directional">', '<!--').replace(
                    '</emitter>\n\n    <medium', '-->\n\n    <medium'))
            q = subprocess.run([render, "--scene-file", nosun, "--print-scene"], capture_output=True, text=True)
            self.assertEqual(q.returncode, 0, q.stderr)
            sha = [next(ln for ln in r.stdout.splitlines() if ln.startswith("sha256")) for r in (p, q)]
            self.assertNotEqual(sha[0], sha[1])
            pfm = os.path.join(d, "c.pfm")
            r = subprocess.run([render, "--cpu", "--scene-file", xml, "-o", pfm, "--quiet"], capture_output=True,
                               text=True)
            self.assertEqual(r.returncode, 0, r.stderr)
            w, h, rgb = mc.read_pfm(pfm)
            self.assertEqual((w, h), (16, 9))
            self.assertTrue(all(math.isfinite(v) and v >= 0 for v in rgb))
            # a file placed by a box of its own (a Mitsuba .vol) has no frame to map pbrt's camera from
            vol = os.path.join(d, "cloud_density.vol")
            p = subprocess.run([sys.executable, script, vol, os.path.join(d, "x.xml"), "--bin", BIN],
                               capture_output=True, text=True)
            self.assertEqual(p.returncode, 1)
            self.assertIn("no world_box", p.stderr)


class MitsubaLoadTest(unittest.TestCase):
    def params(self, mi, scene):
        p = mi.traverse(scene)
        return {k: p[k] for k in p.keys() if not k.endswith(".data")}

    def find(self, params, suffix):
        keys = [k for k in params if k.endswith(suffix)]
        self.assertEqual(len(keys), 1, (suffix, sorted(params)))
        return params[keys[0]]

    def test_bucky_loads_with_its_parameters(self):
        mi = mitsuba_or_skip()
        with tempfile.TemporaryDirectory() as d:
            xml = export("bucky", d, "--width", "12", "--height", "8", "--spp", "2")
            scene = mi.load_file(xml)
            p = self.params(mi, scene)
            self.assertAlmostEqual(self.find(p, "x_fov"), 0.7, places=6)
            self.assertEqual(list(self.find(p, "film.size")), [12, 8])
            self.assertAlmostEqual(self.find(p, "medium.scale"), 40.0)
            self.assertAlmostEqual(self.find(p, "bsdf.eta"), 1.05 / 1.01, places=6)
            self.assertAlmostEqual(self.find(p, "bsdf.alpha.value"), 0.1, places=6)
            self.assertEqual(list(self.find(p, "radiance.value")), [1, 1, 1])
            verts = list(self.find(p, "vertex_positions"))
            self.assertEqual((min(verts), max(verts)), (-0.5, 0.5))
            self.assertEqual(scene.sensors()[0].sampler().sample_count(), 2)
            text = str(scene.integrator())
            self.assertIn("max_depth = 4294967295", text)  # -1: unlimited
            self.assertIn("rr_depth = 1073741824", text)
            med = scene.shapes()[0].interior_medium()
            grid = str(med)
            self.assertIn("dimensions = [32, 32, 32]", grid)
            img = mi.render(scene, seed=1)
            self.assertEqual(tuple(img.shape), (8, 12, 3))
            pfm = os.path.join(d, "b.pfm")
            mi.Bitmap(img).write(pfm)
            w, h, rgb = mc.read_pfm(pfm)
            self.assertEqual((w, h), (12, 8))
            self.assertTrue(all(math.isfinite(v) and v >= 0 for v in rgb))

    def test_smoke_loads_index_matched(self):
        mi = mitsuba_or_skip()
        with tempfile.TemporaryDirectory() as d:
            scene = mi.load_file(export("smoke", d, "--width", "4", "--height", "4", "--spp", "1"))
            self.assertTrue(str(scene.shapes()[0].bsdf()).startswith("Null"), str(scene.shapes()[0].bsdf()))
            self.assertAlmostEqual(self.find(self.params(mi, scene), "medium.scale"), 800.0)


if __name__ == "__main__":
    unittest.main(verbosity=2)
