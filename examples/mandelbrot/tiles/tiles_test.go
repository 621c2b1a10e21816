package tiles

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"math"
	"testing"
)

func TestEncodeDecode(t *testing.T) {
	tile := Tile{ImageWidth: 640, ImageHeight: 480, X: 64, Y: 128, Width: 64, Height: 32, MaxIter: 500,
		View: View{ReMin: -2, ImMin: -1, ReMax: 1, ImMax: 1.5}}
	b := tile.Encode()
	if len(b) != DescriptorSize || string(b[:4]) != Magic {
		t.Fatalf("encoded %d bytes starting %q", len(b), b[:4])
	}
	// Layout spot checks against the documented offsets.
	if b[4] != 0x80 || b[5] != 0x02 || b[28] != 0xf4 || b[29] != 0x01 {
		t.Fatalf("layout: % x", b[:32])
	}
	got, err := Decode(b)
	if err != nil || got != tile {
		t.Fatalf("Decode = %+v, %v", got, err)
	}
}

func TestDecodeRejects(t *testing.T) {
	good := Tile{ImageWidth: 10, ImageHeight: 10, Width: 10, Height: 10, MaxIter: 10, View: DefaultView}
	mut := []func(*Tile){
		func(t *Tile) { t.ImageWidth = 0 },
		func(t *Tile) { t.ImageHeight = MaxImageSide + 1 },
		func(t *Tile) { t.Width = 0 },
		func(t *Tile) { t.X = 1 },
		func(t *Tile) { t.Y = math.MaxUint32 },
		func(t *Tile) { t.MaxIter = 0 },
		func(t *Tile) { t.MaxIter = MaxIterations + 1 },
		func(t *Tile) { t.View.ReMax = t.View.ReMin },
		func(t *Tile) { t.View.ImMin = math.NaN() },
		func(t *Tile) { t.View.ReMax = math.Inf(1) },
	}
	for i, m := range mut {
		tile := good
		m(&tile)
		if _, err := Decode(tile.Encode()); !errors.Is(err, ErrDescriptor) {
			t.Errorf("case %d: %v, want ErrDescriptor", i, err)
		}
	}
	b := good.Encode()
	b[3] = '2'
	if _, err := Decode(b); !errors.Is(err, ErrDescriptor) {
		t.Errorf("wrong magic accepted")
	}
	if _, err := Decode(b[:63]); !errors.Is(err, ErrDescriptor) {
		t.Errorf("short descriptor accepted")
	}
}

func TestParamsTiles(t *testing.T) {
	p := Params{Width: 100, Height: 70, TileWidth: 40, TileHeight: 32, MaxIter: 10, View: DefaultView}
	ts, err := p.Tiles()
	if err != nil {
		t.Fatal(err)
	}
	if p.Columns() != 3 || p.Rows() != 3 || len(ts) != 9 {
		t.Fatalf("%d columns, %d rows, %d tiles", p.Columns(), p.Rows(), len(ts))
	}
	// Row-major, short last column and row, covering the image exactly.
	var area uint32
	for i, tl := range ts {
		col, row := uint32(i%3), uint32(i/3)
		if tl.X != col*40 || tl.Y != row*32 {
			t.Fatalf("tile %d at (%d,%d)", i, tl.X, tl.Y)
		}
		area += tl.Width * tl.Height
	}
	if ts[2].Width != 20 || ts[8].Height != 6 || area != 100*70 {
		t.Fatalf("last column %d wide, last row %d high, area %d", ts[2].Width, ts[8].Height, area)
	}
	data, err := p.Job()
	if err != nil || len(data) != 9*DescriptorSize {
		t.Fatalf("Job: %d bytes, %v", len(data), err)
	}
	if got, _ := Decode(data[4*DescriptorSize : 5*DescriptorSize]); got != ts[4] {
		t.Fatalf("block 4 is not tile 4")
	}
	for _, bad := range []Params{{Width: 10, Height: 10}, {Width: 0, Height: 10, TileWidth: 4, TileHeight: 4, MaxIter: 1, View: DefaultView}} {
		if _, err := bad.Job(); !errors.Is(err, ErrDescriptor) {
			t.Errorf("Job(%+v) = %v, want ErrDescriptor", bad, err)
		}
	}
}

// TestRenderGolden pins the rendered pixels, so a change to the maths or the
// palette (which would split processors running old and new code) is seen.
func TestRenderGolden(t *testing.T) {
	img := Render(Tile{ImageWidth: 64, ImageHeight: 48, X: 16, Y: 8, Width: 32, Height: 24, MaxIter: 100, View: DefaultView})
	sum := sha256.Sum256(img.Pix)
	const want = "4f0b27103706b52ebd875de9a18fc5c1a50f3af79a59af397d684a1d418bcc38"
	if got := hex.EncodeToString(sum[:]); got != want {
		t.Fatalf("pixel hash %s, want %s", got, want)
	}
	// Inside the set is black; far outside escapes at once.
	in := Render(Tile{ImageWidth: 1, ImageHeight: 1, Width: 1, Height: 1, MaxIter: 50, View: View{-0.01, -0.01, 0.01, 0.01}})
	out := Render(Tile{ImageWidth: 1, ImageHeight: 1, Width: 1, Height: 1, MaxIter: 50, View: View{10, 10, 10.01, 10.01}})
	if !bytes.Equal(in.Pix, []byte{0, 0, 0, 255}) || bytes.Equal(out.Pix, in.Pix) {
		t.Fatalf("inside %v, outside %v", in.Pix, out.Pix)
	}
}

func FuzzDecode(f *testing.F) {
	f.Add(Tile{ImageWidth: 10, ImageHeight: 10, Width: 10, Height: 10, MaxIter: 10, View: DefaultView}.Encode())
	f.Add([]byte("MBv1"))
	f.Fuzz(func(t *testing.T, b []byte) {
		tile, err := Decode(b)
		if err != nil {
			return
		}
		if !bytes.Equal(tile.Encode(), b) {
			t.Fatalf("accepted descriptor does not re-encode to itself")
		}
		if err := tile.Validate(); err != nil {
			t.Fatalf("Decode accepted an invalid tile: %v", err)
		}
	})
}
