package presets

// ExamplePrices are illustrative on-demand prices per GPU-hour in US
// dollars, rounded, of the kind public clouds listed for single GPUs in
// 2025–2026. They are examples, not quotes: knee plan marks any cost
// computed from them as such, and --prices replaces them with your own.
var ExamplePrices = map[string]float64{
	"a100-40gb": 1.30,
	"a100-80gb": 1.80,
	"b200":      6.00,
	"h100-80gb": 3.00,
	"h200":      3.80,
	"l4":        0.70,
	"l40s":      1.20,
	"mi300x":    2.50,
}

// ExamplePriceSource says where ExamplePrices come from.
const ExamplePriceSource = "example on-demand prices shipped with knee (not quotes; give your own with --prices)"
