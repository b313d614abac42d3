#!/usr/bin/env python3
"""pbrt-v4's `disney-cloud` scene (pbrt-v4-scenes, disney-cloud/disney-cloud.pbrt)
as a Mitsuba 3 scene file that vptune (--scene-file) and Mitsuba 3 both read.

    scripts/disney_cloud_scene.py VDB OUT.xml [--width 1280] [--height 720] [--spp 16]
                                              [--max-depth 0] [--bin bin]

VDB is Walt Disney Animation Studios' cloud at any resolution
(scripts/fetch_wdas_cloud.sh); OUT.xml gets its density grid beside it
(OUT_density.vol). What is taken from pbrt's file, and how:

  medium   sigma_s 1, sigma_a 0 (albedo 1), Henyey-Greenstein g 0.877,
           density scale 4 per world unit of the VDB's own frame. vptune
           puts the grid's world box in a box whose largest side is 1
           (scenes/scene_volume.c), so the scale becomes 4 x that side's
           world length: the same optical depths.
  boundary pbrt's "interface" material: none (the null boundary).
  lights   the infinite light, radiance (0.03, 0.07, 0.23): a constant
           environment; the distant light toward (-0.5826, -0.7660,
           -0.2717), L (2.6, 2.5, 2.3): a directional emitter of that
           irradiance (pbrt's distant L is the irradiance it gives a
           surface facing it, as Mitsuba's and vptune's are), sampled by
           next-event estimation in the medium (sample_emitters true).
  camera   eye, target and up mapped from the VDB's frame into the
           scene's (the map `bin/render --print-scene` prints: world_box
           -> box); pbrt's 31.07 degrees along the shorter image axis made
           the horizontal field of view of the given aspect. pbrt's
           `Scale -1 1 1` turns its left-handed camera into the
           right-handed one Mitsuba's (and vptune's) lookat already is.
  depth    pbrt renders with maxdepth 100; the default here is unlimited
           depth without Russian roulette (--max-depth 0), vptune's and the
           exported files' convention, so that both renderers compute the
           same unbiased estimate of the same image.

Not taken: pbrt's diffuse ground disk (1000 units below, reflectance 0.2):
vptune renders one medium and no other surface, so neither renderer sees
it here. Prints the scene's name and the camera in the scene's frame.
Exit status 0, 1 on a failure (the message names it), 2 bad usage.
"""

import argparse
import math
import os
import re
import subprocess
import sys

# pbrt-v4-scenes disney-cloud/disney-cloud.pbrt
PBRT_EYE = (648.064, -82.473, -63.856)
PBRT_TARGET = (6.021, 100.043, -43.679)
PBRT_UP = (0.273, 0.962, -0.009)
PBRT_FOV_SHORT_AXIS = 31.07
SUN_TO = (-0.5826, -0.7660, -0.2717)
SUN_L = (2.6, 2.5, 2.3)
SKY_L = (0.03, 0.07, 0.23)
SIGMA_T_PER_WORLD_UNIT = 4.0
HG_G = 0.877


def fail(msg):
    print("disney_cloud_scene: " + msg, file=sys.stderr)
    sys.exit(1)


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        fail("%s failed (exit %d): %s" % (" ".join(cmd), p.returncode, (p.stderr or p.stdout).strip()[-800:]))
    return p.stdout


def corners(out, key):
    m = re.search(r"^%s (\S+) (\S+)$" % key, out, re.M)
    if not m:
        return None
    return [tuple(float(x) for x in c.split(",")) for c in m.groups()]


def fmt(v):
    return ", ".join("%.9g" % x for x in v)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("vdb")
    ap.add_argument("out")
    ap.add_argument("--width", type=int, default=1280)
    ap.add_argument("--height", type=int, default=720)
    ap.add_argument("--spp", type=int, default=16)
    ap.add_argument("--max-depth", type=int, default=0, help="0: unlimited (default); pbrt's file says 100")
    ap.add_argument("--bin", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bin"))
    a = ap.parse_args(argv)
    if min(a.width, a.height, a.spp) < 1 or a.max_depth < 0:
        ap.error("--width, --height and --spp must be positive, --max-depth >= 0")
    if not a.out.endswith(".xml"):
        ap.error("OUT must end in .xml")
    render = os.path.join(a.bin, "render")

    printed = run([render, "--volume", a.vdb, "--print-scene"])
    world, box = corners(printed, "world_box"), corners(printed, "box")
    if not world or not box:
        fail("%s: bin/render --print-scene gives no world_box (the file has no frame of its own)" % a.vdb)
    ext = [world[1][k] - world[0][k] for k in range(3)]
    side = max(ext)
    scale = [(box[1][k] - box[0][k]) / ext[k] for k in range(3)]
    if any(abs(s * side - 1) > 1e-4 for s in scale):
        fail("%s: the scene's box is not the world box scaled uniformly (%s)" % (a.vdb, scale))

    def to_scene(p):
        return [box[0][k] + (p[k] - world[0][k]) * scale[k] for k in range(3)]

    density_scale = SIGMA_T_PER_WORLD_UNIT * side
    # Export the medium and the sky through vptune's own exporter (the sun is
    # written below: its options would make the name longer than a scene
    # name holds).
    run([render, "--volume", a.vdb, "--env", ",".join("%g" % x for x in SKY_L), "--g", "%g" % HG_G, "--albedo", "1",
         "--density-scale", "%.9g" % density_scale, "--export-mitsuba", a.out, "--width", str(a.width),
         "--height", str(a.height), "--spp", str(a.spp), "--quiet"])
    with open(a.out) as f:
        xml = f.read()

    eye, target = to_scene(PBRT_EYE), to_scene(PBRT_TARGET)
    half_short = math.radians(PBRT_FOV_SHORT_AXIS) / 2
    aspect = a.width / a.height
    fov_x = math.degrees(2 * math.atan(math.tan(half_short) * aspect)) if aspect >= 1 else PBRT_FOV_SHORT_AXIS
    edits = [
        (r'<float name="fov" value="[^"]*"/>', '<float name="fov" value="%.9g"/>' % fov_x),
        (r'<lookat origin="[^"]*" target="[^"]*" up="[^"]*"/>',
         '<lookat origin="%s" target="%s" up="%s"/>' % (fmt(eye), fmt(target), fmt(PBRT_UP))),
        (r'<boolean name="sample_emitters" value="false"/>', '<boolean name="sample_emitters" value="true"/>'),
        (r'(<emitter type="constant">.*?</emitter>)',
         r'\1\n\n    <!-- pbrt-v4 disney-cloud: LightSource "distant" "point3 to" [%s] "rgb L" [%s] -->\n'
         r'    <emitter type="directional">\n        <vector name="direction" value="%s"/>\n'
         r'        <rgb name="irradiance" value="%s"/>\n    </emitter>' % (fmt(SUN_TO), fmt(SUN_L), fmt(SUN_TO),
                                                                       fmt(SUN_L))),
    ]
    if a.max_depth:
        edits.append((r'<integer name="max_depth" value="-1"/>', '<integer name="max_depth" value="%d"/>' % a.max_depth))
    for pat, rep in edits:
        xml, n = re.subn(pat, rep, xml, count=1, flags=re.S)
        if n != 1:
            fail("%s: the exported file has no %s to set" % (a.out, pat))
    # pbrt's Material "interface": the medium's bounds do not refract (a .vdb cloud has the null boundary already;
    # a grid from another format has a CT's glass box)
    xml = re.sub(r'<bsdf type="(rough)?dielectric">.*?</bsdf>', '<bsdf type="null"/>', xml, count=1, flags=re.S)
    xml = xml.replace("<!-- no shadow rays from inside the medium (vptune traces none) -->",
                      "<!-- shadow rays toward the sun from every collision (next-event estimation) -->")
    xml = xml.replace("exported for Mitsuba 3", "with pbrt-v4 disney-cloud's camera, sun and sky "
                      "(scripts/disney_cloud_scene.py), for Mitsuba 3")
    tmp = a.out + ".tmp"
    with open(tmp, "w") as f:
        f.write(xml)
    os.replace(tmp, a.out)
    print("wrote %s: pbrt-v4 disney-cloud, %dx%d, %d spp, %s depth; density scale %.6g (4 per world unit x %.6g); "
          "camera %s -> %s, horizontal fov %.4g" % (a.out, a.width, a.height, a.spp,
                                                    "unlimited" if not a.max_depth else "max %d" % a.max_depth,
                                                    density_scale, side, fmt(eye), fmt(target), fov_x))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
