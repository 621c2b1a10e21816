package chaos

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/jobmesh/jobmesh/assemble"
	"github.com/jobmesh/jobmesh/examples"
	"github.com/jobmesh/jobmesh/examples/mandelbrot/tiles"
	"github.com/jobmesh/jobmesh/wasm"
)

// picture is the run's job: the Mandelbrot example, one tile a block,
// and the picture it must produce, run locally block by block.
type picture struct {
	code, data []byte
	blockSize  uint64
	want       []byte
	// hashes are the honest output hashes of the blocks, lowercase hex,
	// as the verdict writes them.
	hashes []string
}

func newPicture(ctx context.Context, c Config) (picture, error) {
	const tile = 32
	code, err := examples.Build(ctx, "mandelbrot")
	if err != nil {
		return picture{}, fmt.Errorf("chaos: building the job: %w", err)
	}
	p := tiles.Params{Width: c.Columns * tile, Height: c.Rows * tile, TileWidth: tile, TileHeight: tile, MaxIter: 64, View: tiles.DefaultView}
	data, err := p.Job()
	if err != nil {
		return picture{}, fmt.Errorf("chaos: the job's tiles: %w", err)
	}
	exec, err := wasm.New(wasm.DefaultConfig(), nil)
	if err != nil {
		return picture{}, fmt.Errorf("chaos: %w", err)
	}
	defer exec.Close(ctx)
	var outs [][]byte
	var hashes []string
	for off := 0; off < len(data); off += tiles.DescriptorSize {
		out, err := exec.Run(ctx, code, data[off:off+tiles.DescriptorSize])
		if err != nil {
			return picture{}, fmt.Errorf("chaos: running the job locally: %w", err)
		}
		outs = append(outs, out)
		sum := sha256.Sum256(out)
		hashes = append(hashes, hex.EncodeToString(sum[:]))
	}
	want, err := assemble.PNGGrid(outs, p.Columns())
	if err != nil {
		return picture{}, fmt.Errorf("chaos: assembling the local picture: %w", err)
	}
	return picture{code: code, data: data, blockSize: tiles.DescriptorSize, want: want, hashes: hashes}, nil
}
