package assemble

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"slices"
	"sort"

	"github.com/jobmesh/jobmesh/examples/wordcount/counts"
)

// Func assembles a job's block outputs, given in block order.
type Func func(outputs [][]byte, opts Options) ([]byte, error)

// Options carry the parameters some kinds need.
type Options struct {
	// Columns is the number of tiles per row for "png-grid". No default:
	// it must be positive for that kind.
	Columns int
}

// Kind names.
const (
	KindConcat    = "concat"
	KindPNGGrid   = "png-grid"
	KindWordCount = "wordcount"
)

// Limits on decoded pictures, so a small PNG that claims a huge size cannot
// exhaust memory.
const (
	MaxTilePixels  = 1 << 24 // one tile
	MaxImagePixels = 1 << 26 // the assembled picture (256 MiB as RGBA)
)

// Errors, matched with errors.Is.
var (
	ErrUnknownKind = errors.New("assemble: unknown kind")
	ErrColumns     = errors.New("assemble: columns must be positive")
	ErrNoTiles     = errors.New("assemble: no tiles")
	ErrBadTile     = errors.New("assemble: tile is not a valid PNG")
	ErrTooLarge    = errors.New("assemble: picture too large")
	ErrMismatch    = errors.New("assemble: one processor index per tile needed")
)

// Registry maps kind names to assemblers.
type Registry struct {
	funcs map[string]Func
}

// NewRegistry returns a registry holding the built-in kinds.
func NewRegistry() *Registry {
	return &Registry{funcs: map[string]Func{
		KindConcat: func(outputs [][]byte, _ Options) ([]byte, error) { return Concat(outputs), nil },
		KindPNGGrid: func(outputs [][]byte, opts Options) ([]byte, error) {
			return PNGGrid(outputs, opts.Columns)
		},
		KindWordCount: func(outputs [][]byte, _ Options) ([]byte, error) { return counts.Merge(outputs) },
	}}
}

// Register adds or replaces the assembler for kind.
func (r *Registry) Register(kind string, f Func) {
	r.funcs[kind] = f
}

// Kinds lists the registered kind names, sorted.
func (r *Registry) Kinds() []string {
	kinds := make([]string, 0, len(r.funcs))
	for k := range r.funcs {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	return kinds
}

// Assemble runs the assembler of kind; an empty kind means "concat".
func (r *Registry) Assemble(kind string, outputs [][]byte, opts Options) ([]byte, error) {
	if kind == "" {
		kind = KindConcat
	}
	f, ok := r.funcs[kind]
	if !ok {
		return nil, fmt.Errorf("%w: %q (have %v)", ErrUnknownKind, kind, r.Kinds())
	}
	return f(outputs, opts)
}

// Concat joins the outputs in order.
func Concat(outputs [][]byte) []byte {
	return slices.Concat(outputs...)
}

// grid is the layout of tiles in row-major order: each column as wide as its
// widest tile and each row as high as its highest, so short last columns and
// rows fit.
type grid struct {
	sizes      []image.Point
	columns    int
	colX, rowY []int // left edge of each column, top edge of each row; one extra entry = total
}

func (g grid) rect(i int) image.Rectangle {
	x, y := g.colX[i%g.columns], g.rowY[i/g.columns]
	return image.Rect(x, y, x+g.sizes[i].X, y+g.sizes[i].Y)
}

func (g grid) bounds() image.Rectangle {
	return image.Rect(0, 0, g.colX[len(g.colX)-1], g.rowY[len(g.rowY)-1])
}

// layout reads each tile's PNG header and lays the tiles out.
func layout(tiles [][]byte, columns int) (grid, error) {
	if columns <= 0 {
		return grid{}, fmt.Errorf("%w: got %d", ErrColumns, columns)
	}
	if len(tiles) == 0 {
		return grid{}, ErrNoTiles
	}
	g := grid{sizes: make([]image.Point, len(tiles)), columns: columns}
	rows := (len(tiles) + columns - 1) / columns
	widths, heights := make([]int, min(columns, len(tiles))), make([]int, rows)
	for i, t := range tiles {
		cfg, err := png.DecodeConfig(bytes.NewReader(t))
		if err != nil {
			return grid{}, fmt.Errorf("%w: tile %d: %w", ErrBadTile, i, err)
		}
		if int64(cfg.Width)*int64(cfg.Height) > MaxTilePixels {
			return grid{}, fmt.Errorf("%w: tile %d is %dx%d", ErrTooLarge, i, cfg.Width, cfg.Height)
		}
		g.sizes[i] = image.Pt(cfg.Width, cfg.Height)
		widths[i%columns] = max(widths[i%columns], cfg.Width)
		heights[i/columns] = max(heights[i/columns], cfg.Height)
	}
	g.colX, g.rowY = offsets(widths), offsets(heights)
	if b := g.bounds(); int64(b.Dx())*int64(b.Dy()) > MaxImagePixels {
		return grid{}, fmt.Errorf("%w: %dx%d", ErrTooLarge, b.Dx(), b.Dy())
	}
	return g, nil
}

func offsets(sizes []int) []int {
	out := make([]int, len(sizes)+1)
	for i, s := range sizes {
		out[i+1] = out[i] + s
	}
	return out
}

// PNGGrid decodes each tile PNG and draws the tiles, in row-major order with
// columns tiles per row, into one PNG. Areas no tile covers (beside a short
// tile) stay transparent.
func PNGGrid(tiles [][]byte, columns int) ([]byte, error) {
	g, err := layout(tiles, columns)
	if err != nil {
		return nil, err
	}
	canvas := image.NewNRGBA(g.bounds())
	for i, t := range tiles {
		img, err := png.Decode(bytes.NewReader(t))
		if err != nil {
			return nil, fmt.Errorf("%w: tile %d: %w", ErrBadTile, i, err)
		}
		draw.Draw(canvas, g.rect(i), img, img.Bounds().Min, draw.Src)
	}
	return encode(canvas)
}

// TileMap draws the grid PNGGrid would draw, but fills each tile with the
// colour of the processor that computed it (processors[i] for tile i; a
// negative index means unknown and is grey), with a darker outline per tile.
// With labels, a legend below the grid gives each processor index i's
// colour and labels[i] (drawLegend).
func TileMap(tiles [][]byte, columns int, processors []int, labels []string) ([]byte, error) {
	if len(processors) != len(tiles) {
		return nil, fmt.Errorf("%w: %d tiles, %d indexes", ErrMismatch, len(tiles), len(processors))
	}
	g, err := layout(tiles, columns)
	if err != nil {
		return nil, err
	}
	grid := g.bounds()
	canvas := image.NewNRGBA(legendBounds(grid, labels))
	for i := range tiles {
		r := g.rect(i)
		fill := ProcessorColour(processors[i])
		edge := color.NRGBA{fill.R / 2, fill.G / 2, fill.B / 2, 255}
		draw.Draw(canvas, r, image.NewUniform(edge), image.Point{}, draw.Src)
		if inner := r.Inset(1); !inner.Empty() {
			draw.Draw(canvas, inner, image.NewUniform(fill), image.Point{}, draw.Src)
		}
	}
	drawLegend(canvas, grid, labels)
	return encode(canvas)
}

// processorPalette is a set of easily told apart colours; indexes beyond it
// cycle.
var processorPalette = []color.NRGBA{
	{230, 25, 75, 255}, {60, 180, 75, 255}, {255, 225, 25, 255}, {0, 130, 200, 255},
	{245, 130, 48, 255}, {145, 30, 180, 255}, {70, 240, 240, 255}, {240, 50, 230, 255},
	{210, 245, 60, 255}, {250, 190, 212, 255}, {0, 128, 128, 255}, {220, 190, 255, 255},
	{170, 110, 40, 255}, {255, 250, 200, 255}, {128, 0, 0, 255}, {170, 255, 195, 255},
}

// ProcessorColour is the colour TileMap gives processor index i.
func ProcessorColour(i int) color.NRGBA {
	if i < 0 {
		return color.NRGBA{128, 128, 128, 255}
	}
	return processorPalette[i%len(processorPalette)]
}

func encode(img image.Image) ([]byte, error) {
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		return nil, fmt.Errorf("assemble: encode PNG: %w", err)
	}
	return buf.Bytes(), nil
}
