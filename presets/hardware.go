package presets

// Hardware is one GPU from its vendor data sheet, with the interconnect of
// the servers it ships in and the efficiencies knee assumes for it.
type Hardware struct {
	Name string
	// Family groups GPUs that share one set of efficiencies.
	Family string
	// HBMGiB is device memory as the data sheet gives it.
	HBMGiB float64
	// BandwidthGBps is peak memory bandwidth.
	BandwidthGBps float64
	// PeakTFLOPS is dense (not sparse) BF16 tensor throughput, PeakTFLOPS8
	// dense FP8 (0: no fp8 tensor cores).
	PeakTFLOPS  float64
	PeakTFLOPS8 float64
	// Interconnect names the GPU-to-GPU link; InterconnectGBps is one GPU's
	// bandwidth to its peers in one direction, InterconnectLatencyUs the
	// cost of one small all-reduce over it.
	Interconnect          string
	InterconnectGBps      float64
	InterconnectLatencyUs float64
	Tuning                Tuning
	Source                string
	// MaxW is the board's power limit from the data sheet (TDP); IdleW an
	// a priori idle draw, about a tenth of it. knee sim's DCGM-shaped
	// power and the predictions' energy are drawn between the two.
	MaxW, IdleW float64
}

// Tuning is the cost model's free parameters for one GPU family.
type Tuning struct {
	ComputeEff, MemoryEff float64
	StepOverheadMs        float64
	SeqOverheadMs         float64
	// AllReduceLatencyUs, when set, replaces the link's a priori cost of
	// one all-reduce (a fit folds into it what tensor parallelism costs
	// beyond the weights it splits).
	AllReduceLatencyUs float64
	// Source says where the numbers come from: a priori, or a fit.
	Source string
}

// Link figures. NVLink bandwidths are the data sheets' bidirectional
// totals halved. The per-collective latencies are a priori figures for a
// one-shot all-reduce of a few hundred KiB (vLLM's custom all-reduce or
// NCCL's low-latency protocol), not measurements.
const (
	nvlink3GBps, nvlink4GBps, nvlink5GBps = 300, 450, 900
	pcie4GBps                             = 32 // Gen4 ×16, one direction
	xgmiGBps                              = 448
	nvlinkLatencyUs, pcieLatencyUs        = 10, 25
	xgmiLatencyUs                         = 15
)

// apriori is the tuning every GPU starts from before any fit: half of peak
// compute in prefill, 80% of peak bandwidth in decode, 2 ms of fixed cost
// a step and 20 µs per sequence in the batch.
var apriori = Tuning{ComputeEff: 0.5, MemoryEff: 0.8, StepOverheadMs: 2, SeqOverheadMs: 0.02, Source: "a priori"}

// Apriori is the tuning before any fit, for comparisons.
func Apriori() Tuning { return apriori }

// Fitted tunings: memory efficiency, step overhead and all-reduce latency
// fitted (predict's TestFitFamilies, gonum Nelder–Mead) to the family's
// three vLLM CI latency anchors (Llama 3.1 8B TP1, 70B TP4, Mixtral 8×7B
// TP2; see docs/fidelity.md), with the embedding and the LM head charged
// as engines run them (sched's vocabulary term). Three parameters on
// three points leave no held-out data: these reproduce the anchors, they
// are not validated beyond them. The A100 fit stops at its 0.95 bound on
// memory efficiency.
var (
	ampereFit = Tuning{ComputeEff: 0.5, MemoryEff: 0.95, StepOverheadMs: 4.16, SeqOverheadMs: 0.02, AllReduceLatencyUs: 50.2,
		Source: "fit to 3 vLLM CI anchors (A100)"}
	hopperFit = Tuning{ComputeEff: 0.5, MemoryEff: 0.858, StepOverheadMs: 2.65, SeqOverheadMs: 0.02, AllReduceLatencyUs: 30.0,
		Source: "fit to 3 vLLM CI anchors (H200)"}
)

// Hardware profiles, from each vendor's data sheet (dense figures; the
// sheets often headline the 2× sparse number).
var hardware = []Hardware{
	// NVIDIA L4: 24 GB GDDR6, 300 GB/s, BF16 121 TFLOPS dense, FP8 242.5; PCIe Gen4.
	{Name: "l4", Family: "ada", MaxW: 72, IdleW: 16, HBMGiB: 24, BandwidthGBps: 300, PeakTFLOPS: 121, PeakTFLOPS8: 242.5,
		Interconnect: "PCIe Gen4", InterconnectGBps: pcie4GBps, InterconnectLatencyUs: pcieLatencyUs, Source: "NVIDIA L4 data sheet"},
	// NVIDIA L40S: 48 GB GDDR6, 864 GB/s, BF16 362.05 TFLOPS dense (733 sparse), FP8 733 dense; PCIe Gen4.
	{Name: "l40s", Family: "ada", MaxW: 350, IdleW: 35, HBMGiB: 48, BandwidthGBps: 864, PeakTFLOPS: 362, PeakTFLOPS8: 733,
		Interconnect: "PCIe Gen4", InterconnectGBps: pcie4GBps, InterconnectLatencyUs: pcieLatencyUs, Source: "NVIDIA L40S data sheet"},
	// NVIDIA A100 40GB SXM: 1,555 GB/s, BF16 312 TFLOPS dense, no FP8; NVLink 3 (600 GB/s both ways).
	{Name: "a100-40gb", Family: "ampere", Tuning: ampereFit, MaxW: 400, IdleW: 55, HBMGiB: 40, BandwidthGBps: 1555, PeakTFLOPS: 312,
		Interconnect: "NVLink 3", InterconnectGBps: nvlink3GBps, InterconnectLatencyUs: nvlinkLatencyUs, Source: "NVIDIA A100 data sheet (SXM)"},
	// NVIDIA A100 80GB SXM: 2,039 GB/s, BF16 312 TFLOPS dense, no FP8; NVLink 3.
	{Name: "a100-80gb", Family: "ampere", Tuning: ampereFit, MaxW: 400, IdleW: 60, HBMGiB: 80, BandwidthGBps: 2039, PeakTFLOPS: 312,
		Interconnect: "NVLink 3", InterconnectGBps: nvlink3GBps, InterconnectLatencyUs: nvlinkLatencyUs, Source: "NVIDIA A100 data sheet (SXM)"},
	// NVIDIA H100 SXM: 80 GB HBM3, 3.35 TB/s, BF16 989 TFLOPS dense, FP8 1,979; NVLink 4 (900 GB/s both ways).
	{Name: "h100-80gb", Family: "hopper", Tuning: hopperFit, MaxW: 700, IdleW: 70, HBMGiB: 80, BandwidthGBps: 3350, PeakTFLOPS: 989, PeakTFLOPS8: 1979,
		Interconnect: "NVLink 4", InterconnectGBps: nvlink4GBps, InterconnectLatencyUs: nvlinkLatencyUs, Source: "NVIDIA H100 data sheet (SXM)"},
	// NVIDIA H200 SXM: 141 GB HBM3e, 4.8 TB/s, BF16 989 TFLOPS dense, FP8 1,979; NVLink 4.
	{Name: "h200", Family: "hopper", Tuning: hopperFit, MaxW: 700, IdleW: 75, HBMGiB: 141, BandwidthGBps: 4800, PeakTFLOPS: 989, PeakTFLOPS8: 1979,
		Interconnect: "NVLink 4", InterconnectGBps: nvlink4GBps, InterconnectLatencyUs: nvlinkLatencyUs, Source: "NVIDIA H200 data sheet (SXM)"},
	// NVIDIA HGX B200, per GPU: 180 GB HBM3e, 7.7 TB/s, BF16 2.25 PFLOPS dense, FP8 4.5; NVLink 5 (1.8 TB/s both ways).
	{Name: "b200", Family: "blackwell", MaxW: 1000, IdleW: 140, HBMGiB: 180, BandwidthGBps: 7700, PeakTFLOPS: 2250, PeakTFLOPS8: 4500,
		Interconnect: "NVLink 5", InterconnectGBps: nvlink5GBps, InterconnectLatencyUs: nvlinkLatencyUs, Source: "NVIDIA HGX B200 data sheet (per GPU)"},
	// AMD Instinct MI300X: 192 GB HBM3, 5.3 TB/s, BF16 1,307.4 TFLOPS dense, FP8 2,614.9; Infinity Fabric, 7 × 64 GB/s per direction.
	{Name: "mi300x", Family: "cdna3", MaxW: 750, IdleW: 140, HBMGiB: 192, BandwidthGBps: 5300, PeakTFLOPS: 1307, PeakTFLOPS8: 2615,
		Interconnect: "Infinity Fabric", InterconnectGBps: xgmiGBps, InterconnectLatencyUs: xgmiLatencyUs, Source: "AMD Instinct MI300X data sheet"},
}

func init() {
	for i := range hardware {
		if hardware[i].Tuning.ComputeEff == 0 {
			hardware[i].Tuning = apriori
		}
	}
}
