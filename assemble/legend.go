package assemble

import (
	"image"
	"image/color"
	"image/draw"
	"strings"

	"golang.org/x/image/font"
	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/math/fixed"
)

// The legend under a tile map: one row per label, a swatch of the
// processor's colour and the label in a 7×13 pixel font, on white.
const (
	legendPad      = 4
	legendRow      = 16
	legendSwatch   = 10
	legendMaxChars = 24 // longer labels are cut in the middle
)

// legendFace is the legend's font: ASCII only.
var legendFace = basicfont.Face7x13

// LegendLabel shortens label to what the legend shows: at most
// legendMaxChars, its middle replaced by "..", anything but printable
// ASCII by '?'.
func LegendLabel(label string) string {
	label = strings.Map(func(r rune) rune {
		if r < 0x20 || r > 0x7e {
			return '?'
		}
		return r
	}, label)
	if len(label) <= legendMaxChars {
		return label
	}
	keep := legendMaxChars - 2
	return label[:keep/2] + ".." + label[len(label)-(keep-keep/2):]
}

// legendBounds is the picture of grid with the legend of labels below
// it: as wide as the wider of the two.
func legendBounds(grid image.Rectangle, labels []string) image.Rectangle {
	if len(labels) == 0 {
		return grid
	}
	w := grid.Dx()
	for _, l := range labels {
		w = max(w, legendPad+legendSwatch+legendPad+font.MeasureString(legendFace, LegendLabel(l)).Ceil()+legendPad)
	}
	return image.Rect(0, 0, w, grid.Dy()+legendPad+len(labels)*legendRow)
}

// legendSwatchAt is the swatch of label i under grid.
func legendSwatchAt(grid image.Rectangle, i int) image.Rectangle {
	top := grid.Dy() + legendPad + i*legendRow + (legendRow-legendSwatch)/2
	return image.Rect(legendPad, top, legendPad+legendSwatch, top+legendSwatch)
}

// drawLegend draws the legend of labels (label i names processor index
// i) into canvas below grid.
func drawLegend(canvas *image.NRGBA, grid image.Rectangle, labels []string) {
	if len(labels) == 0 {
		return
	}
	b := canvas.Bounds()
	draw.Draw(canvas, image.Rect(0, grid.Dy(), b.Dx(), b.Dy()), image.White, image.Point{}, draw.Src)
	d := font.Drawer{Dst: canvas, Src: image.NewUniform(color.Black), Face: legendFace}
	for i, l := range labels {
		sw := legendSwatchAt(grid, i)
		draw.Draw(canvas, sw, image.NewUniform(ProcessorColour(i)), image.Point{}, draw.Src)
		d.Dot = fixed.P(sw.Max.X+legendPad, sw.Max.Y)
		d.DrawString(LegendLabel(l))
	}
}
