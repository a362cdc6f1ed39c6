package workload

import (
	"image"
	"image/color"
)

// patternBlock is the side of a synthetic image's blocks of one colour.
const patternBlock = 32

// pattern is a synthetic image drawn where it is read: blocks of colour
// from the seed with a gradient inside each, so it compresses as a
// photograph might rather than to nothing. Only the blocks' colours are
// kept (256 KiB at 8192×8192), so the encoders read it row by row
// without the image ever being in memory whole.
type pattern struct {
	w, h    int
	across  int // blocks in a row
	colours []color.RGBA
	at      color.RGBA // the last pixel At gave
}

// newPattern draws the blocks' colours from x in row order, blocks
// left to right: the order every image knee has drawn was drawn in.
func newPattern(sz ImageSize, x uint64) *pattern {
	across := (sz.W + patternBlock - 1) / patternBlock
	down := (sz.H + patternBlock - 1) / patternBlock
	p := &pattern{w: sz.W, h: sz.H, across: across, colours: make([]color.RGBA, across*down)}
	for i := range p.colours {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		p.colours[i] = color.RGBA{uint8(x), uint8(x >> 8), uint8(x >> 16), 255}
	}
	return p
}

func (p *pattern) ColorModel() color.Model { return color.RGBAModel }
func (p *pattern) Bounds() image.Rectangle { return image.Rect(0, 0, p.w, p.h) }

// Opaque spares the PNG encoder a pass over every pixel to learn it.
func (p *pattern) Opaque() bool { return true }

// At is the pixel at (x, y): its block's colour, shifted by the
// distance from the block's corner. The colour it returns is valid until
// the next call, which is how the encoders read it (one pixel, at once):
// a colour boxed a pixel made encoding 25–70% slower than drawing the
// whole image first. A pattern is read by one encoder only.
func (p *pattern) At(x, y int) color.Color {
	base := p.colours[(y/patternBlock)*p.across+x/patternBlock]
	d := uint8((x%patternBlock + y%patternBlock) * 3)
	p.at = color.RGBA{base.R + d, base.G ^ d, base.B - d, 255}
	return &p.at
}
