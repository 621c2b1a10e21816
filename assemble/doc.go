// Package assemble puts a job's block outputs back together into the job's
// result, once every MicroJob is verified and the outputs are fetched in block
// order.
//
// A job names how its outputs are assembled by a kind (see Kinds): "concat"
// (the default: the outputs one after another), "png-grid" (each output is a
// PNG tile, drawn into one picture row by row) and "wordcount" (each output is
// a count table of package counts, summed). TileMap draws the companion
// picture that shows which processor computed each tile.
package assemble
