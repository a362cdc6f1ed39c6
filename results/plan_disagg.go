package results

import "fmt"

// disaggVerdict says whether the cheapest configuration that meets the
// SLO is a disaggregated split or aggregated replicas, and by how much
// it beats the cheapest of the other kind (by price, or GPUs without
// one); meets are in the plan's order, cheapest first.
func disaggVerdict(meets []PlanRow) string {
	best := meets[0]
	var other *PlanRow
	for i := range meets[1:] {
		if r := &meets[1+i]; (r.PrefillReplicas > 0) != (best.PrefillReplicas > 0) {
			other = r
			break
		}
	}
	kind, otherKind := "aggregated replicas win", "the cheapest split"
	if best.PrefillReplicas > 0 {
		kind, otherKind = fmt.Sprintf("disaggregated %s wins", best.Split()), "the cheapest aggregated fleet"
	}
	if other == nil {
		return kind + ": no configuration of the other kind meets the SLO"
	}
	name := fmt.Sprintf("%s, %d × %s", otherKind, other.Replicas, other.Config)
	if other.PrefillReplicas > 0 {
		name = fmt.Sprintf("%s, %s", otherKind, other.Split())
	}
	if best.GPUs == other.GPUs && best.CostPerHour == other.CostPerHour {
		return fmt.Sprintf("%s on headroom alone (%.3g/s against %.3g/s): %s costs the same", kind, best.Headroom, other.Headroom, name)
	}
	if best.CostPerHour > 0 && other.CostPerHour > 0 {
		return fmt.Sprintf("%s: $%.2f/h against $%.2f/h for %s (%.0f%% less)", kind, best.CostPerHour, other.CostPerHour,
			name, 100*(1-best.CostPerHour/other.CostPerHour))
	}
	return fmt.Sprintf("%s: %d GPUs against %d for %s", kind, best.GPUs, other.GPUs, name)
}

// RoutingText is how a row's replicas are put together, for a table's
// routing column: a split's pools (xPyD, or xP for a prefill pool no
// decode pool rescued), else the routing policy, else "-".
func (r PlanRow) RoutingText() string {
	switch {
	case r.PrefillReplicas > 0 && r.DecodeReplicas > 0:
		return fmt.Sprintf("%dP%dD", r.PrefillReplicas, r.DecodeReplicas)
	case r.PrefillReplicas > 0:
		return fmt.Sprintf("%dP", r.PrefillReplicas)
	case r.Routing != "":
		return r.Routing
	}
	return "-"
}
