// The GDCM shim: DICOM files and series to a float grid, through Debian's
// GDCM (libgdcm-dev). Contract: scenes/formats/volume_dicom_shim.h. GDCM does the
// parsing and decoding (transfer syntaxes, compressed pixel data); this file
// only checks that the files form one volume and orders them.
//
// A series folder must hold one series: every file an image GDCM reads, the
// same SeriesInstanceUID, the same rows, columns, pixel format and
// orientation, one frame each, at distinct positions along the slice normal
// spaced evenly (a gap wider than the others is a missing slice: refused,
// since resampling would hide it). No exception leaves this file.
#include "scenes/formats/volume_dicom_shim.h"

#include <gdcmDirectory.h>
#include <gdcmImage.h>
#include <gdcmImageReader.h>
#include <gdcmReader.h>
#include <gdcmPixelFormat.h>
#include <gdcmStringFilter.h>
#include <gdcmSystem.h>
#include <gdcmTrace.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cctype>
#include <cstring>
#include <exception>
#include <set>
#include <sstream>
#include <string>
#include <sys/stat.h>
#include <vector>

namespace {

void set_error(VptDicomVolume *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void set_error(VptDicomVolume *out, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out->error, sizeof out->error, fmt, ap);
    va_end(ap);
}

// One image file as read: geometry, tags and the rescaled values.
struct Slice {
    std::string name;
    std::string series;
    unsigned dims[3] = {0, 0, 0};
    double spacing[3] = {1, 1, 1};
    double origin[3] = {0, 0, 0};
    double cosines[6] = {1, 0, 0, 0, 1, 0};
    double slope = 1, intercept = 0;
    gdcm::PixelFormat pf;
    std::vector<float> values;
    double along = 0;  // position along the slice normal
};

std::string trim(std::string s)
{
    while (!s.empty() && (s.back() == ' ' || s.back() == '\0')) s.pop_back();
    return s;
}

// The numbers of a decimal-string tag ("0.5\\0.75"); empty when absent or
// when a part is not a number (blanks around a part are allowed; "nan" and
// "inf" parse, for the caller to refuse with the text). *text: the value.
std::vector<double> numbers(const gdcm::StringFilter &sf, const gdcm::File &f, uint16_t group, uint16_t elem,
                            std::string *text = nullptr)
{
    std::vector<double> v;
    if (!f.GetDataSet().FindDataElement(gdcm::Tag(group, elem))) return v;
    std::string t = trim(sf.ToString(gdcm::Tag(group, elem)));
    if (text) *text = t;
    std::istringstream is(t);
    std::string part;
    while (std::getline(is, part, '\\')) {
        char *end;
        double x = std::strtod(part.c_str(), &end);
        while (*end == ' ') end++;
        if (end == part.c_str() || *end) return std::vector<double>();
        v.push_back(x);
    }
    return v;
}

// A geometry tag, when present, must hold `count` finite numbers (positive
// ones when `positive`): GDCM reads a "nan" as 0 and a zero spacing as 1,
// which would place or size the volume silently wrong.
bool check_geometry(const std::string &name, const gdcm::StringFilter &sf, const gdcm::File &f, uint16_t group,
                    uint16_t elem, const char *tag, size_t count, bool positive, VptDicomVolume *out)
{
    if (!f.GetDataSet().FindDataElement(gdcm::Tag(group, elem))) return true;
    std::string text;
    std::vector<double> v = numbers(sf, f, group, elem, &text);
    bool ok = v.size() == count;
    for (double x : v) ok = ok && std::isfinite(x) && (!positive || x > 0);
    if (ok) return true;
    std::string shown;
    for (char c : text.substr(0, 80)) shown += std::isprint((unsigned char)c) ? c : '?';
    set_error(out, "%s: %s (%04x,%04x) is '%s': expected %zu finite%s numbers", name.c_str(), tag, group, elem,
              shown.c_str(), count, positive ? " positive" : "");
    return false;
}

// Bytes [pos, pos + n) of the file (or of the stream), false past its end.
bool read_at(const std::string &name, std::istream *stream, uint64_t pos, char *buf, size_t n)
{
    if (stream) {
        stream->clear();
        stream->seekg((std::streamoff)pos);
        bool ok = (bool)stream->read(buf, (std::streamsize)n);
        stream->clear();
        stream->seekg(0);
        return ok;
    }
    FILE *f = std::fopen(name.c_str(), "rb");
    if (!f) return false;
    bool ok = fseeko(f, (off_t)pos, SEEK_SET) == 0 && std::fread(buf, 1, n, f) == n;
    std::fclose(f);
    return ok;
}

// Before GDCM reads the pixel data: the length its element states must fit
// in the bytes that follow it (GDCM allocates the stated length first, and
// reads a truncated value without complaint). GDCM reads the header up to
// the pixel data element's own header (skipping its value: the stream then
// stands at the value), then the element's 8 or 12 header bytes are read
// here. *stated: the length (0xFFFFFFFF: encapsulated, left to the decoder).
bool check_pixel_extent(const std::string &name, std::istream *stream, uint64_t total, uint32_t *stated,
                        VptDicomVolume *out)
{
    *stated = 0xFFFFFFFFu;
    gdcm::Reader r;
    if (stream) r.SetStream(*stream);
    else r.SetFileName(name.c_str());
    const gdcm::Tag pixel_data(0x7fe0, 0x0010);
    const bool read = r.ReadUpToTag(pixel_data, std::set<gdcm::Tag>{pixel_data});
    const uint64_t pos = r.GetStreamCurrentPosition();
    if (stream) stream->clear(), stream->seekg(0);
    if (!read) {
        set_error(out, "%s: not a DICOM image that GDCM can read (its header ends early or is corrupt)", name.c_str());
        return false;
    }
    const gdcm::TransferSyntax &ts = r.GetFile().GetHeader().GetDataSetTransferSyntax();
    const bool big = ts.GetSwapCode() == gdcm::SwapCode::BigEndian;
    const size_t hdr = ts.IsExplicit() ? 12 : 8;
    unsigned char h[12];
    const unsigned char tag_le[4] = {0xe0, 0x7f, 0x10, 0x00}, tag_be[4] = {0x7f, 0xe0, 0x00, 0x10};
    if (pos < hdr || pos > total || !read_at(name, stream, pos - hdr, (char *)h, hdr) ||
        std::memcmp(h, big ? tag_be : tag_le, 4) != 0)
        return true; /* no pixel data element: GDCM's image reader refuses the file */
    const unsigned char *l = h + hdr - 4;
    *stated = big ? (uint32_t)l[0] << 24 | (uint32_t)l[1] << 16 | (uint32_t)l[2] << 8 | l[3]
                  : (uint32_t)l[3] << 24 | (uint32_t)l[2] << 16 | (uint32_t)l[1] << 8 | l[0];
    if (*stated != 0xFFFFFFFFu && *stated > total - pos) {
        set_error(out, "%s: the pixel data's length field says %u bytes, but only %llu bytes follow it in the file "
                       "(truncated or corrupt)",
                  name.c_str(), *stated, (unsigned long long)(total - pos));
        return false;
    }
    return true;
}

template <typename T> void convert(const char *src, size_t n, double slope, double icpt, float *dst)
{
    for (size_t i = 0; i < n; i++) {
        T v;
        std::memcpy(&v, src + i * sizeof(T), sizeof(T));
        dst[i] = (float)((double)v * slope + icpt);
    }
}

// DICOM Part 10 files (what scanners and PACS export) start with a 128-byte
// preamble and "DICM". Anything else is refused before GDCM sees it: GDCM
// 3.0's reader of preamble-less ("compat") data asserts, and so aborts the
// program, on some malformed input (found by fuzz/fuzz_volume_dicom.c).
bool has_part10_magic(const std::string &name, std::istream *stream, VptDicomVolume *out)
{
    char head[132];
    bool ok;
    if (stream) {
        ok = (bool)stream->read(head, sizeof head);
        stream->clear();
        stream->seekg(0);
    } else {
        FILE *f = std::fopen(name.c_str(), "rb");
        if (!f) {
            set_error(out, "cannot open '%s': %s", name.c_str(), std::strerror(errno));
            return false;
        }
        ok = std::fread(head, 1, sizeof head, f) == sizeof head;
        std::fclose(f);
    }
    if (!ok || std::memcmp(head + 128, "DICM", 4) != 0) {
        set_error(out, "%s: not a DICOM file (no 'DICM' after the 128-byte preamble; DICOM Part 10 files have it)",
                  name.c_str());
        return false;
    }
    return true;
}

// Reads one file (from disk, or from `stream` when not NULL) into *s.
bool read_slice(const std::string &name, std::istream *stream, uint64_t total, size_t max_bytes, Slice *s,
                VptDicomVolume *out)
{
    if (!has_part10_magic(name, stream, out)) return false;
    if (!stream) {
        struct stat st;
        if (stat(name.c_str(), &st) != 0) {
            set_error(out, "cannot open '%s': %s", name.c_str(), std::strerror(errno));
            return false;
        }
        total = (uint64_t)st.st_size;
    }
    uint32_t stated;
    if (!check_pixel_extent(name, stream, total, &stated, out)) return false;
    gdcm::ImageReader r;
    if (stream) r.SetStream(*stream);
    else r.SetFileName(name.c_str());
    if (!r.Read()) {
        set_error(out, "%s: not a DICOM image that GDCM can read", name.c_str());
        return false;
    }
    const gdcm::Image &img = r.GetImage();
    s->name = name;
    gdcm::StringFilter sf;
    sf.SetFile(r.GetFile());
    s->series = trim(sf.ToString(gdcm::Tag(0x0020, 0x000e)));
    const gdcm::File &file = r.GetFile();
    if (!check_geometry(name, sf, file, 0x0028, 0x0030, "PixelSpacing", 2, true, out) ||
        !check_geometry(name, sf, file, 0x0020, 0x0032, "ImagePositionPatient", 3, false, out) ||
        !check_geometry(name, sf, file, 0x0020, 0x0037, "ImageOrientationPatient", 6, false, out) ||
        !check_geometry(name, sf, file, 0x0018, 0x0088, "SpacingBetweenSlices", 1, false, out))
        return false;
    unsigned nd = img.GetNumberOfDimensions();
    const unsigned *d = img.GetDimensions();
    for (unsigned k = 0; k < 3; k++) s->dims[k] = k < nd ? d[k] : 1;
    const double *sp = img.GetSpacing(), *org = img.GetOrigin(), *dc = img.GetDirectionCosines();
    for (int k = 0; k < 3; k++) {
        s->spacing[k] = sp ? sp[k] : 1;
        s->origin[k] = org ? org[k] : 0;
    }
    if (dc) std::copy(dc, dc + 6, s->cosines);
    // A multi-frame file of a class GDCM takes no geometry from (secondary
    // capture) states it at the top level: PixelSpacing (rows, columns),
    // SpacingBetweenSlices, ImagePositionPatient. Enhanced multi-frame files
    // keep it in functional groups, which GDCM reads itself.
    if (s->dims[2] > 1) {
        const gdcm::File &f = r.GetFile();
        std::vector<double> ps = numbers(sf, f, 0x0028, 0x0030), sbs = numbers(sf, f, 0x0018, 0x0088),
                            ipp = numbers(sf, f, 0x0020, 0x0032);
        if (ps.size() == 2) s->spacing[0] = ps[1], s->spacing[1] = ps[0];
        if (sbs.size() == 1) s->spacing[2] = std::fabs(sbs[0]);
        if (!(s->spacing[2] > 0)) {
            set_error(out, "%s: %u frames %g mm apart (SpacingBetweenSlices): not a positive distance", name.c_str(),
                      s->dims[2], s->spacing[2]);
            return false;
        }
        if (ipp.size() == 3) std::copy(ipp.begin(), ipp.end(), s->origin);
    }
    s->slope = img.GetSlope();
    s->intercept = img.GetIntercept();
    s->pf = img.GetPixelFormat();
    if (s->pf.GetSamplesPerPixel() != 1) {
        set_error(out, "%s: %u samples per pixel (color); a volume needs grayscale images", name.c_str(),
                  (unsigned)s->pf.GetSamplesPerPixel());
        return false;
    }
    for (int k = 0; k < 3; k++)
        if (s->dims[k] < 1 || s->dims[k] > 65536) {
            set_error(out, "%s: dimension %u is outside [1, 65536]", name.c_str(), s->dims[k]);
            return false;
        }
    unsigned long long count = (unsigned long long)s->dims[0] * s->dims[1] * s->dims[2];
    if (count * sizeof(float) > max_bytes) {
        set_error(out, "%s: %ux%ux%u voxels need %llu bytes as floats, more than the limit of %zu", name.c_str(),
                  s->dims[0], s->dims[1], s->dims[2], count * 4ull, max_bytes);
        return false;
    }
    size_t len = img.GetBufferLength();
    size_t bytes = s->pf.GetPixelSize();
    if (bytes == 0 || len != count * bytes) {
        set_error(out, "%s: pixel data of %zu bytes for %llu voxels of %zu bytes", name.c_str(), len, count, bytes);
        return false;
    }
    // Native (not encapsulated) pixel data holds exactly rows x columns x
    // frames x bits allocated / 8 bytes, padded to an even length.
    if (stated != 0xFFFFFFFFu && stated != len && stated != len + (len & 1)) {
        set_error(out, "%s: the pixel data holds %u bytes, but rows x columns x frames x bits allocated (%u x %u x %u x "
                       "%u bits) need %zu",
                  name.c_str(), stated, s->dims[1], s->dims[0], s->dims[2], (unsigned)s->pf.GetBitsAllocated(), len);
        return false;
    }
    std::vector<char> raw(len);
    if (!img.GetBuffer(raw.data())) {
        set_error(out, "%s: GDCM cannot decode the pixel data", name.c_str());
        return false;
    }
    s->values.resize(count);
    float *dst = s->values.data();
    switch (s->pf.GetScalarType()) {
    case gdcm::PixelFormat::UINT8: convert<uint8_t>(raw.data(), count, s->slope, s->intercept, dst); break;
    case gdcm::PixelFormat::INT8: convert<int8_t>(raw.data(), count, s->slope, s->intercept, dst); break;
    case gdcm::PixelFormat::UINT16: convert<uint16_t>(raw.data(), count, s->slope, s->intercept, dst); break;
    case gdcm::PixelFormat::INT16: convert<int16_t>(raw.data(), count, s->slope, s->intercept, dst); break;
    case gdcm::PixelFormat::UINT32: convert<uint32_t>(raw.data(), count, s->slope, s->intercept, dst); break;
    case gdcm::PixelFormat::INT32: convert<int32_t>(raw.data(), count, s->slope, s->intercept, dst); break;
    case gdcm::PixelFormat::FLOAT32: convert<float>(raw.data(), count, s->slope, s->intercept, dst); break;
    case gdcm::PixelFormat::FLOAT64: convert<double>(raw.data(), count, s->slope, s->intercept, dst); break;
    default:
        set_error(out, "%s: pixel format %s is not supported", name.c_str(), s->pf.GetScalarTypeAsString());
        return false;
    }
    for (size_t i = 0; i < count; i++)
        if (!std::isfinite(dst[i])) {
            set_error(out, "%s: voxel %zu is not finite after the rescale", name.c_str(), i);
            return false;
        }
    return true;
}

void finish(const Slice &first, unsigned nz, double dz, VptDicomVolume *out)
{
    out->nx = (int)first.dims[0];
    out->ny = (int)first.dims[1];
    out->nz = (int)nz;
    out->spacing[0] = first.spacing[0];
    out->spacing[1] = first.spacing[1];
    out->spacing[2] = dz;
    std::copy(first.origin, first.origin + 3, out->origin);
    out->stored_bits = (int)first.pf.GetBitsAllocated();
    out->stored_signed = first.pf.GetPixelRepresentation() != 0;
}

// One file: a single slice (nz 1) or a multi-frame volume.
int read_one(const std::string &name, std::istream *stream, uint64_t total, size_t max_bytes, VptDicomVolume *out)
{
    Slice s;
    if (!read_slice(name, stream, total, max_bytes, &s, out)) return -1;
    out->data = (float *)std::malloc(s.values.size() * sizeof(float));
    if (!out->data) {
        set_error(out, "%s: out of memory", name.c_str());
        return -1;
    }
    std::memcpy(out->data, s.values.data(), s.values.size() * sizeof(float));
    finish(s, s.dims[2], s.spacing[2], out);
    return 0;
}

int read_series(const std::string &dir, size_t max_bytes, VptDicomVolume *out)
{
    gdcm::Directory d;
    d.Load(dir.c_str(), false);
    std::vector<std::string> files;
    for (const std::string &f : d.GetFilenames()) {
        std::string base = f.substr(f.find_last_of('/') + 1);
        if (base.empty() || base[0] == '.' || base == "DICOMDIR") continue;
        files.push_back(f);
    }
    if (files.empty()) {
        set_error(out, "%s: no DICOM files in the folder", dir.c_str());
        return -1;
    }
    std::sort(files.begin(), files.end());
    std::vector<Slice> slices(files.size());
    size_t total = 0;
    for (size_t i = 0; i < files.size(); i++) {
        if (!read_slice(files[i], nullptr, 0, max_bytes, &slices[i], out)) return -1;
        total += slices[i].values.size() * sizeof(float);
        if (total > max_bytes) {
            set_error(out, "%s: the series needs more than the limit of %zu bytes as floats", dir.c_str(), max_bytes);
            return -1;
        }
    }
    const Slice &a = slices[0];
    for (const Slice &b : slices) {
        if (b.series != a.series) {
            set_error(out, "%s: mixed series: %s is of series %s, %s of series %s (one series per folder)",
                      dir.c_str(), a.name.c_str(), a.series.c_str(), b.name.c_str(), b.series.c_str());
            return -1;
        }
        if (b.dims[2] != 1) {
            set_error(out, "%s: %s holds %u frames; a series folder holds one slice per file (give a multi-frame "
                           "file as --volume FILE.dcm)", dir.c_str(), b.name.c_str(), b.dims[2]);
            return -1;
        }
        if (b.dims[0] != a.dims[0] || b.dims[1] != a.dims[1]) {
            set_error(out, "%s: unequal slice sizes: %s is %ux%u, %s is %ux%u", dir.c_str(), a.name.c_str(),
                      a.dims[0], a.dims[1], b.name.c_str(), b.dims[0], b.dims[1]);
            return -1;
        }
        for (int k = 0; k < 6; k++)
            if (std::fabs(b.cosines[k] - a.cosines[k]) > 1e-4) {
                set_error(out, "%s: %s and %s have different ImageOrientationPatient", dir.c_str(), a.name.c_str(),
                          b.name.c_str());
                return -1;
            }
        for (int k = 0; k < 2; k++)
            if (std::fabs(b.spacing[k] - a.spacing[k]) > 1e-6 * std::max(1.0, a.spacing[k])) {
                set_error(out, "%s: %s and %s have different PixelSpacing", dir.c_str(), a.name.c_str(),
                          b.name.c_str());
                return -1;
            }
    }
    // the slice normal: row cosines x column cosines
    const double *c = a.cosines;
    double n[3] = {c[1] * c[5] - c[2] * c[4], c[2] * c[3] - c[0] * c[5], c[0] * c[4] - c[1] * c[3]};
    for (Slice &s : slices) s.along = s.origin[0] * n[0] + s.origin[1] * n[1] + s.origin[2] * n[2];
    std::stable_sort(slices.begin(), slices.end(), [](const Slice &x, const Slice &y) { return x.along < y.along; });
    double dz = 1;
    if (slices.size() > 1) {
        std::vector<double> gaps;
        for (size_t i = 1; i < slices.size(); i++) gaps.push_back(slices[i].along - slices[i - 1].along);
        std::vector<double> sorted = gaps;
        std::sort(sorted.begin(), sorted.end());
        dz = sorted[0];
        for (size_t i = 0; i < gaps.size(); i++) {
            if (gaps[i] < 1e-4) {
                set_error(out, "%s: %s and %s lie at the same position along the slice normal (a duplicate slice?)",
                          dir.c_str(), slices[i].name.c_str(), slices[i + 1].name.c_str());
                return -1;
            }
            if (std::fabs(gaps[i] - dz) > 0.01 * dz + 1e-4) {
                set_error(out, "%s: missing slice: %.4g mm between %s and %s, where the other slices are %.4g mm "
                               "apart", dir.c_str(), gaps[i], slices[i].name.c_str(), slices[i + 1].name.c_str(), dz);
                return -1;
            }
        }
    }
    size_t per = slices[0].values.size();
    out->data = (float *)std::malloc(per * slices.size() * sizeof(float));
    if (!out->data) {
        set_error(out, "%s: out of memory", dir.c_str());
        return -1;
    }
    for (size_t i = 0; i < slices.size(); i++)
        std::memcpy(out->data + i * per, slices[i].values.data(), per * sizeof(float));
    finish(slices[0], (unsigned)slices.size(), dz, out);
    return 0;
}

bool is_dir(const std::string &p)
{
    return gdcm::System::FileIsDirectory(p.c_str());
}

}  // namespace

extern "C" int vpt_dicom_shim_abi(void)
{
    // GDCM's warnings go to stderr on their own; the shim reports errors itself
    gdcm::Trace::WarningOff();
    gdcm::Trace::DebugOff();
    return VPT_DICOM_SHIM_ABI;
}

extern "C" int vpt_dicom_read(const char *path, size_t max_bytes, VptDicomVolume *out)
{
    std::memset(out, 0, sizeof *out);
    try {
        int rc = is_dir(path) ? read_series(path, max_bytes, out) : read_one(path, nullptr, 0, max_bytes, out);
        if (rc && out->data) std::free(out->data), out->data = nullptr;
        return rc;
    } catch (const std::exception &e) {
        std::free(out->data);
        out->data = nullptr;
        set_error(out, "%s: %s", path, e.what());
        return -1;
    }
}

extern "C" int vpt_dicom_read_memory(const char *name, const unsigned char *buf, size_t size, size_t max_bytes,
                                     VptDicomVolume *out)
{
    std::memset(out, 0, sizeof *out);
    try {
        std::istringstream is(std::string((const char *)buf, size));
        int rc = read_one(name, &is, size, max_bytes, out);
        if (rc && out->data) std::free(out->data), out->data = nullptr;
        return rc;
    } catch (const std::exception &e) {
        std::free(out->data);
        out->data = nullptr;
        set_error(out, "%s: %s", name, e.what());
        return -1;
    }
}
