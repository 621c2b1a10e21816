package assemble

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"slices"
	"strings"
	"testing"

	"github.com/jobmesh/jobmesh/examples/mandelbrot/tiles"
	"github.com/jobmesh/jobmesh/examples/wordcount/counts"
)

func solid(t *testing.T, w, h int, c color.NRGBA) []byte {
	t.Helper()
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for i := 0; i < len(img.Pix); i += 4 {
		copy(img.Pix[i:], []byte{c.R, c.G, c.B, c.A})
	}
	b, err := encode(img)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func decode(t *testing.T, b []byte) *image.NRGBA {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if n, ok := img.(*image.NRGBA); ok {
		return n
	}
	// Opaque pictures are stored without alpha and decode as RGBA.
	n := image.NewNRGBA(img.Bounds())
	draw.Draw(n, n.Bounds(), img, img.Bounds().Min, draw.Src)
	return n
}

func TestConcat(t *testing.T) {
	got := Concat([][]byte{[]byte("ab"), nil, []byte("c"), {}, []byte("def")})
	if string(got) != "abcdef" {
		t.Fatalf("Concat = %q", got)
	}
	if len(Concat(nil)) != 0 {
		t.Fatal("Concat(nil) not empty")
	}
}

func TestPNGGridShortLastRowAndColumn(t *testing.T) {
	red, green, blue := color.NRGBA{255, 0, 0, 255}, color.NRGBA{0, 255, 0, 255}, color.NRGBA{0, 0, 255, 255}
	// 3 columns; the last column is narrower, the second row shorter and
	// one tile short of full.
	ts := [][]byte{
		solid(t, 4, 3, red), solid(t, 4, 3, green), solid(t, 2, 3, blue),
		solid(t, 4, 1, blue), solid(t, 4, 1, red),
	}
	out, err := PNGGrid(ts, 3)
	if err != nil {
		t.Fatal(err)
	}
	img := decode(t, out)
	if img.Bounds() != image.Rect(0, 0, 10, 4) {
		t.Fatalf("bounds %v, want 10x4", img.Bounds())
	}
	clear := color.NRGBA{}
	want := func(x, y int) color.NRGBA {
		switch {
		case y < 3 && x < 4:
			return red
		case y < 3 && x < 8:
			return green
		case y < 3:
			return blue
		case x < 4:
			return blue
		case x < 8:
			return red
		}
		return clear // no tile in the last cell
	}
	for y := range 4 {
		for x := range 10 {
			if got := img.NRGBAAt(x, y); got != want(x, y) {
				t.Fatalf("pixel (%d,%d) = %v, want %v", x, y, got, want(x, y))
			}
		}
	}
	again, _ := PNGGrid(ts, 3)
	if !bytes.Equal(out, again) {
		t.Fatal("PNGGrid is not deterministic")
	}
}

// TestPNGGridMandelbrot assembles separately rendered tiles and expects the
// very pixels of the whole picture rendered at once.
func TestPNGGridMandelbrot(t *testing.T) {
	p := tiles.Params{Width: 50, Height: 35, TileWidth: 16, TileHeight: 16, MaxIter: 60, View: tiles.DefaultView}
	ts, err := p.Tiles()
	if err != nil {
		t.Fatal(err)
	}
	var outputs [][]byte
	for _, tl := range ts {
		b, err := encode(tiles.Render(tl))
		if err != nil {
			t.Fatal(err)
		}
		outputs = append(outputs, b)
	}
	got, err := NewRegistry().Assemble(KindPNGGrid, outputs, Options{Columns: p.Columns()})
	if err != nil {
		t.Fatal(err)
	}
	whole := tiles.Render(tiles.Tile{ImageWidth: 50, ImageHeight: 35, Width: 50, Height: 35, MaxIter: 60, View: tiles.DefaultView})
	if img := decode(t, got); img.Bounds() != whole.Bounds() || !bytes.Equal(img.Pix, whole.Pix) {
		t.Fatalf("assembled picture differs from the whole render (%v vs %v)", img.Bounds(), whole.Bounds())
	}
}

func TestPNGGridBadInput(t *testing.T) {
	good := solid(t, 2, 2, color.NRGBA{1, 2, 3, 255})
	if _, err := PNGGrid([][]byte{good}, 0); !errors.Is(err, ErrColumns) {
		t.Errorf("zero columns: %v", err)
	}
	if _, err := PNGGrid([][]byte{good}, -1); !errors.Is(err, ErrColumns) {
		t.Errorf("negative columns: %v", err)
	}
	if _, err := PNGGrid(nil, 2); !errors.Is(err, ErrNoTiles) {
		t.Errorf("no tiles: %v", err)
	}
	if _, err := PNGGrid([][]byte{good, []byte("GIF89a not a png")}, 2); !errors.Is(err, ErrBadTile) {
		t.Errorf("not a PNG: %v", err)
	}
	if _, err := PNGGrid([][]byte{good[:len(good)-20]}, 1); !errors.Is(err, ErrBadTile) {
		t.Errorf("truncated PNG: %v", err)
	}
	huge := withSize(t, good, 100000, 100000)
	if _, err := PNGGrid([][]byte{huge}, 1); !errors.Is(err, ErrTooLarge) {
		t.Errorf("huge tile: %v", err)
	}
	big := withSize(t, good, 4096, 4096) // each fits, 5 of them do not
	if _, err := PNGGrid(slices.Repeat([][]byte{big}, 5), 5); !errors.Is(err, ErrTooLarge) {
		t.Errorf("huge picture: %v", err)
	}
}

// withSize rewrites a PNG's IHDR to claim another size (with a valid CRC).
func withSize(t *testing.T, p []byte, w, h uint32) []byte {
	t.Helper()
	b := bytes.Clone(p)
	const ihdr = 8 + 8 // signature, length and type
	binary.BigEndian.PutUint32(b[ihdr:], w)
	binary.BigEndian.PutUint32(b[ihdr+4:], h)
	binary.BigEndian.PutUint32(b[ihdr+13:], crc32.ChecksumIEEE(b[12:ihdr+13]))
	if _, err := png.DecodeConfig(bytes.NewReader(b)); err != nil {
		t.Fatalf("patched header: %v", err)
	}
	return b
}

func TestTileMap(t *testing.T) {
	ts := [][]byte{solid(t, 4, 4, color.NRGBA{}), solid(t, 4, 4, color.NRGBA{}), solid(t, 3, 4, color.NRGBA{}), solid(t, 4, 3, color.NRGBA{})}
	procs := []int{0, 1, 0, -1}
	out, err := TileMap(ts, 3, procs, nil)
	if err != nil {
		t.Fatal(err)
	}
	img := decode(t, out)
	if img.Bounds() != image.Rect(0, 0, 11, 7) {
		t.Fatalf("bounds %v", img.Bounds())
	}
	centres := []image.Point{{2, 2}, {6, 2}, {9, 2}, {2, 5}}
	for i, c := range centres {
		if got := img.NRGBAAt(c.X, c.Y); got != ProcessorColour(procs[i]) {
			t.Errorf("tile %d centre %v, want %v", i, got, ProcessorColour(procs[i]))
		}
	}
	if img.NRGBAAt(0, 0) == ProcessorColour(0) {
		t.Error("tile outline missing")
	}
	if ProcessorColour(0) == ProcessorColour(1) || ProcessorColour(-1) != (color.NRGBA{128, 128, 128, 255}) {
		t.Error("processor colours")
	}
	if _, err := TileMap(ts, 3, procs[:3], nil); !errors.Is(err, ErrMismatch) {
		t.Errorf("mismatch: %v", err)
	}
	if _, err := TileMap(ts, 0, procs, nil); !errors.Is(err, ErrColumns) {
		t.Errorf("zero columns: %v", err)
	}
}

func TestRegistry(t *testing.T) {
	r := NewRegistry()
	if got := r.Kinds(); !slices.Equal(got, []string{KindConcat, KindPNGGrid, KindWordCount}) {
		t.Fatalf("kinds %v", got)
	}
	out, err := r.Assemble("", [][]byte{[]byte("a"), []byte("b")}, Options{})
	if err != nil || string(out) != "ab" {
		t.Fatalf("default kind: %q, %v", out, err)
	}
	blocks := [][]byte{counts.Encode(counts.Count([]byte("a b a"))), counts.Encode(counts.Count([]byte("b c")))}
	out, err = r.Assemble(KindWordCount, blocks, Options{})
	if err != nil || string(out) != "a 2\nb 2\nc 1\n" {
		t.Fatalf("wordcount: %q, %v", out, err)
	}
	if _, err := r.Assemble(KindWordCount, [][]byte{[]byte("nope")}, Options{}); !errors.Is(err, counts.ErrMalformed) {
		t.Fatalf("bad wordcount block: %v", err)
	}
	if _, err := r.Assemble(KindPNGGrid, [][]byte{solid(t, 1, 1, color.NRGBA{})}, Options{}); !errors.Is(err, ErrColumns) {
		t.Fatalf("png-grid without columns: %v", err)
	}
	if _, err := r.Assemble("zip", nil, Options{}); !errors.Is(err, ErrUnknownKind) {
		t.Fatalf("unknown kind: %v", err)
	}
	r.Register("count", func(o [][]byte, _ Options) ([]byte, error) { return []byte{byte(len(o))}, nil })
	if out, err := r.Assemble("count", make([][]byte, 3), Options{}); err != nil || out[0] != 3 {
		t.Fatalf("registered kind: %v, %v", out, err)
	}
}

// FuzzPNGGrid: arbitrary tile bytes give an error or a picture, never a
// panic or an allocation beyond the limits.
func FuzzPNGGrid(f *testing.F) {
	img := image.NewNRGBA(image.Rect(0, 0, 3, 2))
	seed, _ := encode(img)
	f.Add(seed, uint8(1))
	f.Add([]byte("\x89PNG\r\n\x1a\n"), uint8(2))
	f.Fuzz(func(t *testing.T, tile []byte, cols uint8) {
		_, _ = PNGGrid([][]byte{tile, seed}, int(cols%4))
		_, _ = TileMap([][]byte{seed, tile}, int(cols%4), []int{0, 1}, nil)
	})
}

func TestTileMapLegend(t *testing.T) {
	ts := [][]byte{solid(t, 4, 4, color.NRGBA{}), solid(t, 4, 4, color.NRGBA{})}
	labels := []string{"12D3KooWAbcdefghijklmnopqrstuvwxyz0123456789", "short"}
	out, err := TileMap(ts, 2, []int{0, 1}, labels)
	if err != nil {
		t.Fatal(err)
	}
	img := decode(t, out)
	grid := image.Rect(0, 0, 8, 4)
	if b := img.Bounds(); b.Dy() != grid.Dy()+legendPad+2*legendRow || b.Dx() <= grid.Dx() {
		t.Fatalf("bounds %v: no room for a legend of 2 rows", b)
	}
	if got := img.NRGBAAt(2, 2); got != ProcessorColour(0) {
		t.Errorf("tile 0 is %v, want %v", got, ProcessorColour(0))
	}
	for i := range labels {
		sw := legendSwatchAt(grid, i)
		if c := sw.Min.Add(image.Pt(legendSwatch/2, legendSwatch/2)); img.NRGBAAt(c.X, c.Y) != ProcessorColour(i) {
			t.Errorf("legend row %d: swatch %v, want %v", i, img.NRGBAAt(c.X, c.Y), ProcessorColour(i))
		}
		// The label: dark pixels right of the swatch, in the row.
		text := 0
		for y := sw.Min.Y - 3; y < sw.Max.Y+3; y++ {
			for x := sw.Max.X + legendPad; x < img.Bounds().Max.X; x++ {
				if c := img.NRGBAAt(x, y); c.A == 255 && c.R < 64 && c.G < 64 && c.B < 64 {
					text++
				}
			}
		}
		if text < 20 {
			t.Errorf("legend row %d: %d dark pixels, no label drawn", i, text)
		}
	}
	if got := LegendLabel(labels[0]); len(got) != legendMaxChars || !strings.HasPrefix(got, "12D3KooWAbc") || !strings.HasSuffix(got, "456789") {
		t.Errorf("long label shortened to %q", got)
	}
	if got := LegendLabel("a\u00e9\n"); got != "a??" {
		t.Errorf("non-ASCII label drawn as %q", got)
	}
}
