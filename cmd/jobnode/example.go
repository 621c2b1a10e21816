package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/jobmesh/jobmesh/examples"
	"github.com/jobmesh/jobmesh/examples/mandelbrot/tiles"
)

// exampleJob is what 'jobnode example mandelbrot --json' prints: the files
// written and the slicing to submit them with.
type exampleJob struct {
	Code      string `json:"code"`
	Data      string `json:"data"`
	BlockSize int    `json:"block_size"`
	Output    string `json:"output"`
	Columns   int    `json:"columns"`
	Blocks    int    `json:"blocks"`
}

func newExampleCmd() *cobra.Command {
	var (
		out           string
		width, height uint32
		tile          uint32
		asJSON        bool
	)
	cmd := &cobra.Command{
		Use:   "example mandelbrot",
		Short: "Write an example job's code and data to files, ready for 'jobnode job submit'",
		Long: `Compile the Mandelbrot example to WebAssembly (it needs the go command) and
write its code (mandelbrot.wasm) and data (mandelbrot.tiles, one 64-byte
tile descriptor a block) into --out, then print how to submit them.`,
		Args:      cobra.ExactArgs(1),
		ValidArgs: []string{"mandelbrot"},
		RunE: func(cmd *cobra.Command, args []string) error {
			if args[0] != "mandelbrot" {
				return fmt.Errorf("unknown example %q: try mandelbrot", args[0])
			}
			p := tiles.Params{Width: width, Height: height, TileWidth: tile, TileHeight: tile, MaxIter: 256, View: tiles.DefaultView}
			data, err := p.Job()
			if err != nil {
				return err
			}
			code, err := examples.Build(cmd.Context(), "mandelbrot")
			if err != nil {
				return err
			}
			if err := os.MkdirAll(out, 0o755); err != nil {
				return err
			}
			j := exampleJob{
				Code: filepath.Join(out, "mandelbrot.wasm"), Data: filepath.Join(out, "mandelbrot.tiles"),
				BlockSize: tiles.DescriptorSize, Output: "png-grid", Columns: p.Columns(), Blocks: len(data) / tiles.DescriptorSize,
			}
			if err := os.WriteFile(j.Code, code, 0o644); err != nil {
				return err
			}
			if err := os.WriteFile(j.Data, data, 0o644); err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			if asJSON {
				return printJSON(w, j)
			}
			fmt.Fprintf(w, "code %s\ndata %s (%d blocks)\nsubmit with: jobnode job submit --code %s --data %s --block-size %d --output %s --columns %d --price WEI --wait\n",
				j.Code, j.Data, j.Blocks, j.Code, j.Data, j.BlockSize, j.Output, j.Columns)
			return nil
		},
	}
	cmd.Flags().StringVarP(&out, "out", "o", ".", "directory to write the files into")
	cmd.Flags().Uint32Var(&width, "width", 192, "picture width in pixels")
	cmd.Flags().Uint32Var(&height, "height", 160, "picture height in pixels")
	cmd.Flags().Uint32Var(&tile, "tile", 32, "tile size in pixels (one tile a block)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}
