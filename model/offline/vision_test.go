package offline_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"hash/crc32"
	"image"
	"image/jpeg"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/model"
	"github.com/trellis-go/trellis/model/offline"
)

// pngWithText encodes a small PNG and inserts tEXt chunks after its header.
func pngWithText(t testing.TB, kv ...string) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := png.Encode(&buf, image.NewGray(image.Rect(0, 0, 2, 2))); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	ihdrEnd := 8 + 12 + int(binary.BigEndian.Uint32(data[8:]))
	var chunks []byte
	for i := 0; i+1 < len(kv); i += 2 {
		body := append([]byte(kv[i]+"\x00"), kv[i+1]...)
		c := binary.BigEndian.AppendUint32(nil, uint32(len(body)))
		c = append(c, "tEXt"...)
		c = append(c, body...)
		c = binary.BigEndian.AppendUint32(c, crc32.ChecksumIEEE(c[4:]))
		chunks = append(chunks, c...)
	}
	return append(append(append([]byte{}, data[:ihdrEnd]...), chunks...), data[ihdrEnd:]...)
}

// jpegWithEXIF encodes a small JPEG with an EXIF ImageDescription and, when xmp is set, an XMP
// packet with a dc:description.
func jpegWithEXIF(t *testing.T, description, xmp string) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, image.NewGray(image.Rect(0, 0, 2, 2)), nil); err != nil {
		t.Fatal(err)
	}
	// TIFF, little-endian: header, IFD0 with one ASCII entry pointing after the IFD.
	tiff := []byte("II*\x00")
	tiff = binary.LittleEndian.AppendUint32(tiff, 8)
	if description == "" {
		tiff = binary.LittleEndian.AppendUint16(tiff, 0)
		tiff = binary.LittleEndian.AppendUint32(tiff, 0)
	} else {
		desc := append([]byte(description), 0)
		tiff = binary.LittleEndian.AppendUint16(tiff, 1)
		tiff = binary.LittleEndian.AppendUint16(tiff, 0x010E)
		tiff = binary.LittleEndian.AppendUint16(tiff, 2)
		tiff = binary.LittleEndian.AppendUint32(tiff, uint32(len(desc)))
		tiff = binary.LittleEndian.AppendUint32(tiff, 8+2+12+4)
		tiff = binary.LittleEndian.AppendUint32(tiff, 0)
		tiff = append(tiff, desc...)
	}
	seg := func(payload []byte) []byte {
		s := []byte{0xFF, 0xE1}
		s = binary.BigEndian.AppendUint16(s, uint16(len(payload)+2))
		return append(s, payload...)
	}
	out := []byte{0xFF, 0xD8}
	out = append(out, seg(append([]byte("Exif\x00\x00"), tiff...))...)
	if xmp != "" {
		out = append(out, seg([]byte("http://ns.adobe.com/xap/1.0/\x00<x:xmpmeta><rdf:RDF><rdf:Description><dc:description><rdf:Alt><rdf:li xml:lang=\"x-default\">"+xmp+"</rdf:li></rdf:Alt></dc:description></rdf:Description></rdf:RDF></x:xmpmeta>"))...)
	}
	return append(out, buf.Bytes()[2:]...)
}

func dataURL(mime string, b []byte) string {
	return "data:" + mime + ";base64," + base64.StdEncoding.EncodeToString(b)
}

func imageMsg(text, url string) message.Message {
	return message.Message{Role: message.RoleUser, Content: text, Parts: []message.Part{{Type: message.PartImage, ImageURL: url}}}
}

func TestImagesReadThroughWhatTheyCarry(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	jpg := jpegWithEXIF(t, "", "")
	if err := os.WriteFile(filepath.Join(dir, "bath.jpg"), jpg, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "bath.jpg.json"), []byte(`{"room": "bathroom", "condition": "needs renovation", "features": ["bathtub", "old tiles"]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "lego.txt"), []byte("brand: Lego\nupc: 673419340557\nlabels: Star Wars, sealed box"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		part message.Part
		want map[string]any
	}{
		{"png tEXt", message.Part{Type: message.PartImage, ImageURL: dataURL("image/png", pngWithText(t, "room", "kitchen", "Description", "condition: good\nfeatures: island, gas hob"))},
			map[string]any{"room": "kitchen", "condition": "good", "features": []any{"island", "gas hob"}}},
		{"jpeg exif json", message.Part{Type: message.PartImage, ImageURL: dataURL("image/jpeg", jpegWithEXIF(t, `{"room":"living room","condition":"renovated"}`, ""))},
			map[string]any{"room": "living room", "condition": "renovated"}},
		{"jpeg xmp", message.Part{Type: message.PartImage, ImageURL: dataURL("image/jpeg", jpegWithEXIF(t, "", "brand: Hasbro\nupc: 630509"))},
			map[string]any{"brand": "Hasbro", "upc": "630509"}},
		{"raw base64 with mime type", message.Part{Type: message.PartImage, MIMEType: "image/png", ImageURL: base64.StdEncoding.EncodeToString(pngWithText(t, "room", "garage"))},
			map[string]any{"room": "garage"}},
		{"sidecar by http name", message.Part{Type: message.PartImage, ImageURL: "http://localhost:8080/apps/demo/static/bath.jpg"},
			map[string]any{"room": "bathroom", "condition": "needs renovation", "features": []any{"bathtub", "old tiles"}}},
		{"sidecar by data URL name", message.Part{Type: message.PartImage, ImageURL: "data:image/jpeg;name=lego.jpg;base64," + base64.StdEncoding.EncodeToString(jpg)},
			map[string]any{"brand": "Lego", "upc": "673419340557", "labels": []any{"Star Wars", "sealed box"}}},
		{"data URL parameters and part text", message.Part{Type: message.PartImage, Text: "condition: worn", ImageURL: "data:image/jpeg;room=bed%20room;base64," + base64.StdEncoding.EncodeToString(jpg)},
			map[string]any{"room": "bed room", "condition": "worn"}},
	}
	for _, c := range cases {
		got, err := offline.DescribeImage(c.part, dir)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if mustJSON(got) != mustJSON(c.want) {
			t.Errorf("%s: %s, want %s", c.name, mustJSON(got), mustJSON(c.want))
		}
	}
	_, err := offline.DescribeImage(message.Part{Type: message.PartImage, ImageURL: dataURL("image/jpeg", jpg)})
	if !errors.Is(err, offline.ErrNoImageText) || !strings.Contains(err.Error(), "sidecar") {
		t.Errorf("bare image: %v", err)
	}
	// Files outside the image directories are never read.
	if _, err := offline.DescribeImage(message.Part{Type: message.PartImage, ImageURL: "file://" + filepath.Join(dir, "bath.jpg")}); err == nil {
		t.Errorf("read a sidecar with no image directory configured")
	}
}

// TestVisionAnswersAndFillsFromPictures: a picture alone is described (in the user's language);
// with a schema its labels fill the fields; with tools they feed the arguments.
func TestVisionAnswersAndFillsFromPictures(t *testing.T) {
	t.Parallel()
	photo := dataURL("image/png", pngWithText(t, "room", "kitchen", "condition", "needs renovation", "features", "island, gas hob"))
	m := offline.New(nil)
	resp, err := m.Generate(context.Background(), &model.Request{Messages: []message.Message{imageMsg("O que vês nesta foto?", photo)}})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message.Metadata["offline_rule"] != "vision" || !strings.Contains(resp.Message.Content, "A imagem está identificada como: condition: needs renovation; features: island, gas hob; room: kitchen.") {
		t.Errorf("vision answer = %q (%v)", resp.Message.Content, resp.Message.Metadata)
	}
	resp, err = m.Generate(context.Background(), &model.Request{Messages: []message.Message{imageMsg("Classify this room", photo)},
		Schema: &model.Schema{Name: "room", JSON: json.RawMessage(`{"type":"object","properties":{
			"room_type":{"type":"string","enum":["kitchen","bathroom","bedroom","living_room"]},
			"condition":{"type":"string","enum":["good","fair","needs_renovation"]},
			"features":{"type":"array","items":{"type":"string"}}},"required":["room_type","condition","features"]}`)}})
	if err != nil {
		t.Fatal(err)
	}
	if got := string(resp.Structured); got != `{"condition":"needs_renovation","features":["island","gas hob"],"room_type":"kitchen"}` {
		t.Errorf("structured from picture = %s", got)
	}
	tools := []model.ToolSpec{spec("estimate_renovation", "Estimate renovation costs for a room.", `{"type":"object","properties":{"scope":{"type":"string","enum":["kitchen","bathroom","whole_house"]}},"required":["scope"]}`)}
	resp, err = m.Generate(context.Background(), &model.Request{Messages: []message.Message{imageMsg("How much to renovate this?", photo)}, Tools: tools})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Message.ToolCalls) != 1 || string(resp.Message.ToolCalls[0].Arguments) != `{"scope":"kitchen"}` {
		t.Errorf("tool call from picture = %+v", resp.Message)
	}
	resp, err = m.Generate(context.Background(), &model.Request{Messages: []message.Message{imageMsg("What is this?", "data:image/png;base64,"+base64.StdEncoding.EncodeToString(pngWithText(t)))}})
	if err != nil || !strings.Contains(resp.Message.Content, "I cannot see this picture") {
		t.Errorf("blind answer = %q, %v", resp.Message.Content, err)
	}
}

// FuzzDescribeImage: no picture, however broken, makes the reader panic.
func FuzzDescribeImage(f *testing.F) {
	f.Add([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\x05tEXtroom\x00x\x00\x00\x00\x00"))
	f.Add([]byte{0xFF, 0xD8, 0xFF, 0xE1, 0x00, 0x10, 'E', 'x', 'i', 'f', 0, 0, 'I', 'I', '*', 0, 8, 0, 0, 0})
	f.Add([]byte{0xFF, 0xD8, 0xFF, 0xE1, 0x00, 0x22, 'E', 'x', 'i', 'f', 0, 0, 'M', 'M', 0, '*', 0, 0, 0, 8, 0, 1, 0x87, 0x69, 0, 4, 0, 0, 0, 1, 0, 0, 0, 8})
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _ = offline.DescribeImage(message.Part{Type: message.PartImage, ImageURL: "data:image/png;base64," + base64.StdEncoding.EncodeToString(data)})
	})
}
