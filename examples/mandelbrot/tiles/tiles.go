// Package tiles defines the blocks of a mandelbrot job: fixed-size tile
// descriptors, how a picture is cut into them (the job's data), and how one
// tile is rendered. The mandelbrot program decodes one descriptor from stdin
// and writes the rendered tile as a PNG; package assemble's PNGGrid puts the
// tiles back together in the order Job produced them.
//
// # Descriptor layout (DescriptorSize = 64 bytes, little-endian)
//
//	offset  size  field
//	0       4     magic "MBv1" (layout version)
//	4       4     uint32 image width in pixels
//	8       4     uint32 image height in pixels
//	12      4     uint32 tile x (left column of the tile)
//	16      4     uint32 tile y (top row of the tile)
//	20      4     uint32 tile width
//	24      4     uint32 tile height
//	28      4     uint32 maximum iterations
//	32      8     float64 view: real part at the left edge  (ReMin)
//	40      8     float64 view: imaginary part at the bottom (ImMin)
//	48      8     float64 view: real part at the right edge (ReMax)
//	56      8     float64 view: imaginary part at the top    (ImMax)
//
// Pixel (px, py) of the image samples the point
// c = ReMin + (px+0.5)·(ReMax−ReMin)/width + i·(ImMax − (py+0.5)·(ImMax−ImMin)/height),
// so y grows downwards as in the PNG.
package tiles

import (
	"encoding/binary"
	"errors"
	"fmt"
	"image"
	"image/color"
	"math"
)

// DescriptorSize is the size of one encoded tile descriptor: the job's block
// size.
const DescriptorSize = 64

// Magic starts every descriptor and names the layout version.
const Magic = "MBv1"

// Limits that keep one block's work and output bounded.
const (
	MaxImageSide  = 1 << 16 // pixels per image side
	MaxTilePixels = 1 << 22 // pixels per tile (16 MiB as RGBA)
	MaxIterations = 1 << 20
)

// ErrDescriptor is returned for a descriptor or job parameters that are
// malformed or out of range.
var ErrDescriptor = errors.New("tiles: bad descriptor")

// View is the rectangle of the complex plane the image shows.
type View struct {
	ReMin, ImMin, ReMax, ImMax float64
}

// DefaultView frames the whole Mandelbrot set.
var DefaultView = View{ReMin: -2.5, ImMin: -1.25, ReMax: 1, ImMax: 1.25}

// Tile is one block of a mandelbrot job.
type Tile struct {
	ImageWidth, ImageHeight uint32
	X, Y, Width, Height     uint32
	MaxIter                 uint32
	View                    View
}

// Validate checks the ranges documented on the limits.
func (t Tile) Validate() error {
	switch {
	case t.ImageWidth == 0 || t.ImageHeight == 0 || t.ImageWidth > MaxImageSide || t.ImageHeight > MaxImageSide:
		return fmt.Errorf("%w: image %dx%d not within 1..%d", ErrDescriptor, t.ImageWidth, t.ImageHeight, MaxImageSide)
	case t.Width == 0 || t.Height == 0 || uint64(t.Width)*uint64(t.Height) > MaxTilePixels:
		return fmt.Errorf("%w: tile %dx%d empty or over %d pixels", ErrDescriptor, t.Width, t.Height, MaxTilePixels)
	case uint64(t.X)+uint64(t.Width) > uint64(t.ImageWidth) || uint64(t.Y)+uint64(t.Height) > uint64(t.ImageHeight):
		return fmt.Errorf("%w: tile %dx%d at (%d,%d) outside the %dx%d image", ErrDescriptor, t.Width, t.Height, t.X, t.Y, t.ImageWidth, t.ImageHeight)
	case t.MaxIter == 0 || t.MaxIter > MaxIterations:
		return fmt.Errorf("%w: max iterations %d not within 1..%d", ErrDescriptor, t.MaxIter, MaxIterations)
	}
	return t.View.validate()
}

func (v View) validate() error {
	for _, f := range []float64{v.ReMin, v.ImMin, v.ReMax, v.ImMax} {
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return fmt.Errorf("%w: view %+v not finite", ErrDescriptor, v)
		}
	}
	if !(v.ReMin < v.ReMax) || !(v.ImMin < v.ImMax) {
		return fmt.Errorf("%w: view %+v is empty", ErrDescriptor, v)
	}
	return nil
}

// Encode returns the 64-byte descriptor of t.
func (t Tile) Encode() []byte {
	b := make([]byte, DescriptorSize)
	copy(b, Magic)
	le := binary.LittleEndian
	for i, v := range []uint32{t.ImageWidth, t.ImageHeight, t.X, t.Y, t.Width, t.Height, t.MaxIter} {
		le.PutUint32(b[4+4*i:], v)
	}
	for i, f := range []float64{t.View.ReMin, t.View.ImMin, t.View.ReMax, t.View.ImMax} {
		le.PutUint64(b[32+8*i:], math.Float64bits(f))
	}
	return b
}

// Decode parses and validates one descriptor. b must be exactly
// DescriptorSize bytes.
func Decode(b []byte) (Tile, error) {
	if len(b) != DescriptorSize {
		return Tile{}, fmt.Errorf("%w: %d bytes, want %d", ErrDescriptor, len(b), DescriptorSize)
	}
	if string(b[:4]) != Magic {
		return Tile{}, fmt.Errorf("%w: magic %q, want %q", ErrDescriptor, b[:4], Magic)
	}
	le := binary.LittleEndian
	u := func(i int) uint32 { return le.Uint32(b[4+4*i:]) }
	f := func(i int) float64 { return math.Float64frombits(le.Uint64(b[32+8*i:])) }
	t := Tile{
		ImageWidth: u(0), ImageHeight: u(1), X: u(2), Y: u(3), Width: u(4), Height: u(5), MaxIter: u(6),
		View: View{ReMin: f(0), ImMin: f(1), ReMax: f(2), ImMax: f(3)},
	}
	return t, t.Validate()
}

// Params describe a whole picture to cut into tiles.
type Params struct {
	Width, Height         uint32 // image size in pixels
	TileWidth, TileHeight uint32 // tile size; the last column and row may be narrower
	MaxIter               uint32
	View                  View
}

// Columns is the number of tiles per row: the columns argument of
// assemble.PNGGrid.
func (p Params) Columns() int { return int((p.Width + p.TileWidth - 1) / p.TileWidth) }

// Rows is the number of tile rows.
func (p Params) Rows() int { return int((p.Height + p.TileHeight - 1) / p.TileHeight) }

// Tiles cuts the picture into tiles in row-major order.
func (p Params) Tiles() ([]Tile, error) {
	if p.TileWidth == 0 || p.TileHeight == 0 {
		return nil, fmt.Errorf("%w: tile size %dx%d", ErrDescriptor, p.TileWidth, p.TileHeight)
	}
	var out []Tile
	for y := uint32(0); y < p.Height; y += p.TileHeight {
		for x := uint32(0); x < p.Width; x += p.TileWidth {
			t := Tile{
				ImageWidth: p.Width, ImageHeight: p.Height,
				X: x, Y: y, Width: min(p.TileWidth, p.Width-x), Height: min(p.TileHeight, p.Height-y),
				MaxIter: p.MaxIter, View: p.View,
			}
			if err := t.Validate(); err != nil {
				return nil, err
			}
			out = append(out, t)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: image %dx%d has no pixels", ErrDescriptor, p.Width, p.Height)
	}
	return out, nil
}

// Job returns the job's data: every tile's descriptor, concatenated in
// row-major order, so block i of the data is tile i.
func (p Params) Job() ([]byte, error) {
	ts, err := p.Tiles()
	if err != nil {
		return nil, err
	}
	data := make([]byte, 0, len(ts)*DescriptorSize)
	for _, t := range ts {
		data = append(data, t.Encode()...)
	}
	return data, nil
}

// Render computes the tile's pixels. The explicit float64 conversions stop
// the compiler from fusing multiply-adds, which some CPUs would round
// differently: every platform must produce the same bytes.
func Render(t Tile) *image.NRGBA {
	img := image.NewNRGBA(image.Rect(0, 0, int(t.Width), int(t.Height)))
	dx := float64(float64(t.View.ReMax-t.View.ReMin) / float64(t.ImageWidth))
	dy := float64(float64(t.View.ImMax-t.View.ImMin) / float64(t.ImageHeight))
	for py := range int(t.Height) {
		ci := float64(t.View.ImMax - float64((float64(t.Y+uint32(py))+0.5)*dy))
		for px := range int(t.Width) {
			cr := float64(t.View.ReMin + float64((float64(t.X+uint32(px))+0.5)*dx))
			img.SetNRGBA(px, py, colour(escape(cr, ci, t.MaxIter), t.MaxIter))
		}
	}
	return img
}

// escape returns the iteration at which z escapes |z| > 2, or maxIter.
func escape(cr, ci float64, maxIter uint32) uint32 {
	var zr, zi float64
	for n := range maxIter {
		zr2, zi2 := float64(zr*zr), float64(zi*zi)
		if float64(zr2+zi2) > 4 {
			return n
		}
		zi = float64(float64(2*zr*zi) + ci)
		zr = float64(float64(zr2-zi2) + cr)
	}
	return maxIter
}

// palette cycles through a fixed gradient; points inside the set are black.
var palette = func() [64]color.NRGBA {
	var p [64]color.NRGBA
	stops := []color.NRGBA{{0, 7, 100, 255}, {32, 107, 203, 255}, {237, 255, 255, 255}, {255, 170, 0, 255}, {0, 2, 0, 255}}
	for i := range p {
		pos := float64(i) / float64(len(p)) * float64(len(stops)-1)
		a, b := stops[int(pos)], stops[int(pos)+1]
		f := pos - float64(int(pos))
		mix := func(x, y uint8) uint8 { return uint8(float64(x) + f*(float64(y)-float64(x)) + 0.5) }
		p[i] = color.NRGBA{mix(a.R, b.R), mix(a.G, b.G), mix(a.B, b.B), 255}
	}
	return p
}()

func colour(n, maxIter uint32) color.NRGBA {
	if n >= maxIter {
		return color.NRGBA{0, 0, 0, 255}
	}
	return palette[n%uint32(len(palette))]
}
