package results

// GPUFigures are the GPUs' own account of a measured window, scraped from
// their exporters (NVIDIA's DCGM exporter): each GPU's power and energy,
// their sum, and the energy per unit of work.
type GPUFigures struct {
	// WindowS is the span scraped: the measured window until it drained.
	WindowS float64     `json:"window_s"`
	GPUs    []GPUFigure `json:"gpus"`
	// EnergyJ is the GPUs' energy over the window; PowerMeanW its mean
	// rate and PowerMaxW the largest summed power sampled.
	EnergyJ    float64 `json:"energy_j"`
	PowerMeanW float64 `json:"power_mean_w"`
	PowerMaxW  float64 `json:"power_max_w"`
	// Energy per unit of the window's measured work (0: none of it).
	JoulesPerOutputToken    float64 `json:"joules_per_output_token"`
	JoulesPerRequest        float64 `json:"joules_per_request"`
	JoulesPer1kPromptTokens float64 `json:"joules_per_1k_prompt_tokens"`
	OutputTokensPerJoule    float64 `json:"output_tokens_per_joule"`
	// Warnings say what was missing (a GPU whose counter reset, an
	// endpoint that stopped answering).
	Warnings []string `json:"warnings,omitempty"`
	// Notes say what the figures count and leave out (the idle GPUs).
	Notes []string `json:"notes,omitempty"`
}

// GPUFigure is one GPU's account.
type GPUFigure struct {
	// Endpoint is the exporter scraped; GPU, UUID, Model and Host its
	// labels for the device.
	Endpoint string `json:"endpoint"`
	GPU      string `json:"gpu"`
	UUID     string `json:"uuid,omitempty"`
	Model    string `json:"model,omitempty"`
	Host     string `json:"host,omitempty"`
	// EnergyJ is from the energy counter when it advanced across the
	// window (EnergySource "counter"), else power integrated over the
	// samples ("integrated power").
	EnergyJ      float64 `json:"energy_j"`
	EnergySource string  `json:"energy_source"`
	PowerMeanW   float64 `json:"power_mean_w"`
	PowerMaxW    float64 `json:"power_max_w"`
	UtilMeanPct  float64 `json:"util_mean_pct,omitempty"`
	FBUsedMaxMiB float64 `json:"fb_used_max_mib,omitempty"`
	// UtilKnown says the exporter gave the GPU's utilisation; Idle that it
	// was under 2% over the window: it served none of the load, and its
	// energy is left out of the figures per unit of work.
	UtilKnown bool `json:"util_known,omitempty"`
	Idle      bool `json:"idle,omitempty"`
}

// PerWork fills the energy per unit of r's measured work from EnergyJ.
func (g *GPUFigures) PerWork(r *Run) {
	g.JoulesPerOutputToken, g.JoulesPerRequest, g.JoulesPer1kPromptTokens, g.OutputTokensPerJoule = 0, 0, 0, 0
	if out := r.Tokens.OutputTotal; out > 0 {
		g.JoulesPerOutputToken = g.EnergyJ / float64(out)
		if g.EnergyJ > 0 {
			g.OutputTokensPerJoule = float64(out) / g.EnergyJ
		}
	}
	if n := r.Requests.OK; n > 0 {
		g.JoulesPerRequest = g.EnergyJ / float64(n)
	}
	if in := r.Tokens.InputTotal; in > 0 {
		g.JoulesPer1kPromptTokens = g.EnergyJ / float64(in) * 1000
	}
}

// Serving is how many GPUs the figures count: those not idle.
func (g *GPUFigures) Serving() int {
	n := 0
	for _, f := range g.GPUs {
		if !f.Idle {
			n++
		}
	}
	return n
}
