package meshtest

import (
	"context"
	"testing"

	"github.com/jobmesh/jobmesh/assemble"
	"github.com/jobmesh/jobmesh/examples"
	"github.com/jobmesh/jobmesh/examples/mandelbrot/tiles"
	"github.com/jobmesh/jobmesh/wasm"
)

// Mandelbrot is the picture example job at a test's size: its
// WebAssembly code, its tile descriptors (one block each) and their
// parameters.
type Mandelbrot struct {
	Code, Data []byte
	Params     tiles.Params
}

// NewMandelbrot builds the example for a w×h picture of tile×tile tiles.
func NewMandelbrot(t testing.TB, w, h, tile uint32) Mandelbrot {
	t.Helper()
	code, err := examples.Build(context.Background(), "mandelbrot")
	if err != nil {
		t.Fatal(err)
	}
	p := tiles.Params{Width: w, Height: h, TileWidth: tile, TileHeight: tile, MaxIter: 64, View: tiles.DefaultView}
	data, err := p.Job()
	if err != nil {
		t.Fatal(err)
	}
	return Mandelbrot{Code: code, Data: data, Params: p}
}

// Local runs the job block by block on this machine's executor and
// assembles the picture: what a mesh's output must equal.
func (j Mandelbrot) Local(t testing.TB) []byte {
	t.Helper()
	exec, err := wasm.New(wasm.DefaultConfig(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer exec.Close(context.Background())
	var outs [][]byte
	for off := 0; off < len(j.Data); off += tiles.DescriptorSize {
		out, err := exec.Run(context.Background(), j.Code, j.Data[off:off+tiles.DescriptorSize])
		if err != nil {
			t.Fatal(err)
		}
		outs = append(outs, out)
	}
	pic, err := assemble.PNGGrid(outs, j.Params.Columns())
	if err != nil {
		t.Fatal(err)
	}
	return pic
}
