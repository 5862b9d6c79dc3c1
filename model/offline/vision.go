package offline

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"unicode"

	"github.com/trellis-go/trellis/message"
)

// The offline model cannot see pixels. It "sees" what a picture says about itself: text
// embedded in the file, or a labelled sidecar beside it. Applications ship demo photos this way
// so the offline model reads their content (room type, condition, features; product labels,
// UPCs, brand). It reads, first found wins per key:
//
//  1. what accompanies the image in the message: the image part's Text, and the parameters of
//     a data URL ("data:image/jpeg;room=kitchen;condition=worn;base64,...", values
//     percent-encoded);
//  2. text embedded in the file: PNG tEXt, zTXt and iTXt chunks (each keyword a key, so
//     "room" = "kitchen"; the keywords Description, Comment and Title are read as text), JPEG
//     EXIF ImageDescription and UserComment, and an XMP dc:description;
//  3. a sidecar in one of Options.ImageDirs named after the image: photo.jpg.json,
//     photo.jpg.txt, photo.json or photo.txt, for a file:// URL, a path, an http(s) URL (by its
//     last path segment; nothing is fetched) or a data URL with a name parameter.
//
// A text is read as a JSON object when it is one, else as "key: value" lines, else as a
// description. Keys are lower-cased with spaces as underscores.

// imageInfo is what the offline model reads about one image.
type imageInfo struct {
	Fields map[string]any
	Source string // where it was read: "message", "png", "exif", "xmp", "sidecar"
}

func (ii imageInfo) text() string {
	keys := make([]string, 0, len(ii.Fields))
	for k := range ii.Fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, strings.ReplaceAll(k, "_", " ")+": "+valueText(ii.Fields[k]))
	}
	return strings.Join(parts, "; ")
}

func valueText(v any) string {
	switch t := v.(type) {
	case string:
		return t
	case []any:
		s := make([]string, len(t))
		for i, x := range t {
			s[i] = valueText(x)
		}
		return strings.Join(s, ", ")
	}
	return toString(v)
}

// readImage reads what the image part says about itself; an empty Fields when nothing does.
func (m *Model) readImage(p message.Part) imageInfo {
	info := imageInfo{Fields: map[string]any{}}
	merge := func(src string, fields map[string]any) {
		for k, v := range fields {
			if _, has := info.Fields[k]; !has {
				info.Fields[k] = v
				if info.Source == "" {
					info.Source = src
				}
			}
		}
	}
	if strings.TrimSpace(p.Text) != "" {
		merge("message", parseLabel(p.Text))
	}
	data, name, params := m.imageBytes(p)
	merge("message", params)
	if len(data) > 0 {
		src, fields := embedded(data)
		merge(src, fields)
	}
	if name != "" {
		merge("sidecar", m.sidecar(name))
	}
	return info
}

// imageBytes returns the image's bytes when the part carries or points to them locally, the
// file name to look a sidecar up by, and a data URL's parameters.
func (m *Model) imageBytes(p message.Part) (data []byte, name string, params map[string]any) {
	u := strings.TrimSpace(p.ImageURL)
	params = map[string]any{}
	switch {
	case strings.HasPrefix(u, "data:"):
		head, body, ok := strings.Cut(u[len("data:"):], ",")
		if !ok {
			return nil, "", params
		}
		isB64 := false
		for i, part := range strings.Split(head, ";") {
			if i == 0 {
				continue
			}
			if part == "base64" {
				isB64 = true
				continue
			}
			k, v, ok := strings.Cut(part, "=")
			if !ok {
				continue
			}
			if uv, err := url.QueryUnescape(v); err == nil {
				v = uv
			}
			if key := labelKey(k); key == "name" || key == "filename" {
				name = v
			} else {
				params[key] = v
			}
		}
		if isB64 {
			data, _ = base64.StdEncoding.DecodeString(body)
		} else if s, err := url.PathUnescape(body); err == nil {
			data = []byte(s)
		}
	case p.MIMEType != "" && !strings.Contains(u, "://"):
		data, _ = base64.StdEncoding.DecodeString(u)
	case strings.HasPrefix(u, "file://"):
		pu, err := url.Parse(u)
		if err == nil {
			name = pu.Path
			data = m.readLocal(pu.Path)
		}
	case strings.HasPrefix(u, "http://") || strings.HasPrefix(u, "https://"):
		if pu, err := url.Parse(u); err == nil {
			name = path.Base(pu.Path)
			data = m.readLocal(name)
		}
	case u != "":
		name = u
		data = m.readLocal(u)
	}
	return data, name, params
}

// readLocal reads a file by name from Options.ImageDirs (only there); nil when absent.
func (m *Model) readLocal(name string) []byte {
	for _, dir := range m.imageDirs {
		p := filepath.Join(dir, filepath.Base(name))
		if f, err := os.Open(p); err == nil {
			data, _ := io.ReadAll(io.LimitReader(f, 32<<20))
			_ = f.Close()
			return data
		}
	}
	return nil
}

// sidecar reads photo.jpg.json, photo.jpg.txt, photo.json or photo.txt from Options.ImageDirs.
func (m *Model) sidecar(name string) map[string]any {
	base := filepath.Base(name)
	stem := strings.TrimSuffix(base, filepath.Ext(base))
	for _, cand := range []string{base + ".json", base + ".txt", stem + ".json", stem + ".txt"} {
		if data := m.readLocal(cand); data != nil {
			return parseLabel(string(data))
		}
	}
	return nil
}

var reLabelLine = regexp.MustCompile(`^\s*([\p{L}][\p{L}\p{N} _-]{0,40}?)\s*[:=]\s*(.+?)\s*$`)

// parseLabel reads a label text: a JSON object, "key: value" lines, or a description.
func parseLabel(text string) map[string]any {
	text = cleanText(text)
	if text == "" {
		return nil
	}
	var obj map[string]any
	if strings.HasPrefix(text, "{") && json.Unmarshal([]byte(text), &obj) == nil {
		out := map[string]any{}
		for k, v := range obj {
			out[labelKey(k)] = v
		}
		return out
	}
	out := map[string]any{}
	var loose []string
	for _, line := range strings.Split(text, "\n") {
		if line = strings.TrimSpace(line); line == "" {
			continue
		}
		if sm := reLabelLine.FindStringSubmatch(line); sm != nil && !strings.Contains(sm[2], "//") {
			out[labelKey(sm[1])] = labelValue(sm[1], sm[2])
			continue
		}
		loose = append(loose, line)
	}
	if len(loose) > 0 {
		out["description"] = strings.Join(loose, " ")
	}
	return out
}

func labelKey(k string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(strings.ToLower(strings.TrimSpace(k)), "-", " ")), "_")
}

// textKeywords are PNG keywords and EXIF fields whose text is a label to parse rather than a
// value of their own.
var textKeywords = setOf("description comment title usercomment imagedescription caption")

// embedded reads the text a PNG or JPEG carries about itself.
func embedded(data []byte) (string, map[string]any) {
	switch {
	case bytes.HasPrefix(data, []byte("\x89PNG\r\n\x1a\n")):
		return "png", pngText(data)
	case bytes.HasPrefix(data, []byte{0xFF, 0xD8}):
		return jpegText(data)
	}
	return "", nil
}

func pngText(data []byte) map[string]any {
	out := map[string]any{}
	add := func(key, text string) {
		if textKeywords[strings.ReplaceAll(strings.ToLower(key), " ", "")] {
			for k, v := range parseLabel(text) {
				if _, has := out[k]; !has {
					out[k] = v
				}
			}
			return
		}
		if text = cleanText(text); text != "" {
			out[labelKey(key)] = labelValue(key, text)
		}
	}
	for pos := 8; pos+12 <= len(data); {
		n := int(binary.BigEndian.Uint32(data[pos:]))
		typ := string(data[pos+4 : pos+8])
		if n < 0 || pos+12+n > len(data) {
			break
		}
		body := data[pos+8 : pos+8+n]
		pos += 12 + n
		switch typ {
		case "tEXt":
			if k, v, ok := bytes.Cut(body, []byte{0}); ok {
				add(string(k), latin1(v))
			}
		case "zTXt":
			if k, v, ok := bytes.Cut(body, []byte{0}); ok && len(v) > 1 {
				if t, err := inflate(v[1:]); err == nil {
					add(string(k), latin1(t))
				}
			}
		case "iTXt":
			k, rest, ok := bytes.Cut(body, []byte{0})
			if !ok || len(rest) < 2 {
				continue
			}
			compressed := rest[0] == 1
			rest = rest[2:]
			_, rest, _ = bytes.Cut(rest, []byte{0}) // language tag
			_, rest, _ = bytes.Cut(rest, []byte{0}) // translated keyword
			if compressed {
				t, err := inflate(rest)
				if err != nil {
					continue
				}
				rest = t
			}
			add(string(k), string(rest))
		case "IEND":
			return out
		}
	}
	return out
}

func inflate(b []byte) ([]byte, error) {
	r, err := zlib.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(io.LimitReader(r, 1<<20))
}

func latin1(b []byte) string {
	rs := make([]rune, len(b))
	for i, c := range b {
		rs[i] = rune(c)
	}
	return string(rs)
}

var reXMPDescription = regexp.MustCompile(`(?s)<dc:description>.*?<rdf:li[^>]*>(.*?)</rdf:li>|dc:description="([^"]*)"`)

// jpegText reads EXIF ImageDescription and UserComment, and XMP dc:description.
func jpegText(data []byte) (string, map[string]any) {
	out := map[string]any{}
	src := ""
	merge := func(s, text string) {
		for k, v := range parseLabel(text) {
			if _, has := out[k]; !has {
				out[k] = v
				if src == "" {
					src = s
				}
			}
		}
	}
	for pos := 2; pos+4 <= len(data); {
		if data[pos] != 0xFF {
			break
		}
		marker := data[pos+1]
		if marker == 0xD9 || marker == 0xDA { // end of image, start of scan: no more metadata
			break
		}
		if marker >= 0xD0 && marker <= 0xD7 || marker == 0x01 {
			pos += 2
			continue
		}
		n := int(binary.BigEndian.Uint16(data[pos+2:]))
		if n < 2 || pos+2+n > len(data) {
			break
		}
		seg := data[pos+4 : pos+2+n]
		pos += 2 + n
		if marker != 0xE1 {
			continue
		}
		switch {
		case bytes.HasPrefix(seg, []byte("Exif\x00\x00")):
			for _, t := range exifTexts(seg[6:]) {
				merge("exif", t)
			}
		case bytes.HasPrefix(seg, []byte("http://ns.adobe.com/xap/1.0/\x00")):
			if sm := reXMPDescription.FindSubmatch(seg); sm != nil {
				t := string(sm[1])
				if t == "" {
					t = string(sm[2])
				}
				merge("xmp", xmlUnescape(t))
			}
		}
	}
	return src, out
}

func xmlUnescape(s string) string {
	return strings.NewReplacer("&lt;", "<", "&gt;", ">", "&quot;", `"`, "&apos;", "'", "&#10;", "\n", "&amp;", "&").Replace(s)
}

// exifTexts returns ImageDescription (IFD0 0x010E) and UserComment (EXIF IFD 0x9286).
func exifTexts(tiff []byte) []string {
	if len(tiff) < 8 {
		return nil
	}
	var bo binary.ByteOrder
	switch string(tiff[:2]) {
	case "II":
		bo = binary.LittleEndian
	case "MM":
		bo = binary.BigEndian
	default:
		return nil
	}
	var out []string
	var walk func(off uint32, depth int)
	walk = func(off uint32, depth int) {
		if depth > 2 || int(off)+2 > len(tiff) {
			return
		}
		count := int(bo.Uint16(tiff[off:]))
		for i := range count {
			e := int(off) + 2 + 12*i
			if e+12 > len(tiff) {
				return
			}
			tag, typ, n := bo.Uint16(tiff[e:]), bo.Uint16(tiff[e+2:]), bo.Uint32(tiff[e+4:])
			val := tiff[e+8 : e+12]
			bytesAt := func() []byte {
				if n <= 4 {
					return val[:n]
				}
				o := bo.Uint32(val)
				if uint64(o)+uint64(n) > uint64(len(tiff)) {
					return nil
				}
				return tiff[o : o+n]
			}
			switch {
			case tag == 0x010E && typ == 2:
				out = append(out, strings.TrimRight(string(bytesAt()), "\x00 "))
			case tag == 0x9286:
				b := bytesAt()
				if len(b) > 8 {
					out = append(out, userComment(b, bo))
				}
			case tag == 0x8769:
				walk(bo.Uint32(val), depth+1)
			}
		}
	}
	walk(bo.Uint32(tiff[4:]), 0)
	return out
}

func userComment(b []byte, bo binary.ByteOrder) string {
	code, body := string(b[:8]), b[8:]
	if strings.HasPrefix(code, "UNICODE") {
		rs := make([]rune, 0, len(body)/2)
		for i := 0; i+1 < len(body); i += 2 {
			rs = append(rs, rune(bo.Uint16(body[i:])))
		}
		return strings.TrimRight(string(rs), "\x00 ")
	}
	return strings.TrimRight(string(body), "\x00 ")
}

// ErrNoImageText says an image carries nothing the offline model can read.
var ErrNoImageText = errors.New("offline: the image carries no text the offline model can read")

// DescribeImage returns what the offline model reads about an image part (see the package
// documentation, "Images"), as key/value fields; ErrNoImageText when there is nothing. dirs are
// the directories sidecars and local files are read from.
func DescribeImage(p message.Part, dirs ...string) (map[string]any, error) {
	m := New(&Options{ImageDirs: dirs})
	info := m.readImage(p)
	if len(info.Fields) == 0 {
		return nil, fmt.Errorf("%w; embed a description (PNG tEXt, EXIF ImageDescription, XMP) or put a sidecar such as photo.jpg.json in an image directory", ErrNoImageText)
	}
	return info.Fields, nil
}

// describeImages is the answer to pictures sent without tools: what each one carries.
func (f *filler) describeImages() string {
	var b strings.Builder
	for i, img := range f.images {
		if len(f.images) > 1 {
			fmt.Fprintf(&b, "%d. ", i+1)
		}
		if len(img.Fields) == 0 {
			b.WriteString(f.lang.p().imageBlind)
		} else {
			b.WriteString(fmt.Sprintf(f.lang.p().imageSees, img.text()))
		}
		b.WriteString("\n")
	}
	return b.String()
}

// cleanText trims spaces and control characters (padding, string terminators) around text.
func cleanText(s string) string {
	return strings.TrimFunc(s, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) })
}

// labelValue is a label's value: a list for plural keys (features, labels, tags) written with
// commas, the text otherwise.
func labelValue(key, v string) any {
	k := strings.ToLower(key)
	if !strings.Contains(v, ",") || !(strings.Contains(k, "feature") || strings.Contains(k, "label") || strings.Contains(k, "tag") || strings.HasSuffix(k, "s")) {
		return v
	}
	var list []any
	for _, x := range strings.Split(v, ",") {
		if x = strings.TrimSpace(x); x != "" {
			list = append(list, x)
		}
	}
	return list
}
