package cmd

import (
	"strings"

	"github.com/kneebench/knee/bench"
	"github.com/kneebench/knee/kube"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// checkRunFlags checks a shard pod's knee run flags with the parser and
// the checks knee run itself uses, so that a typo or a bad value fails
// here and not in N pods: flags the manifest sets are refused, so is every
// credential (a Secret carries it: --api-key-secret, --header-secret,
// --base-url-secret, --server-metrics-url-secret), and input files must be
// in the pod, on the --inputs-configmap mount.
func checkRunFlags(args []string, configMap string) error {
	o := &runOptions{}
	run := newRunCmdWith(o)
	if err := run.ParseFlags(args); err != nil {
		return usageErr("run flags after --: %w", err)
	}
	if rest := run.Flags().Args(); len(rest) > 0 {
		return usageErr("run flags after --: unexpected %q", rest)
	}
	for _, f := range []string{"base-url", "shard", "shards", "start-at", "output"} {
		if run.Flags().Changed(f) {
			return usageErr("run flags after --: --%s is set by the manifest", f)
		}
	}
	if err := noCredentials(run, o); err != nil {
		return err
	}
	// The target's own words (--header, --extra-body, --endpoint and the
	// rest) are checked here as run checks them, the base URL aside: the
	// manifest sets it, whatever $OPENAI_BASE_URL says here.
	t := o.target.TargetSpec
	t.BaseURL = ""
	if err := t.Validate(); err != nil {
		return usageErr("run flags after --: %w", err)
	}
	files := 0
	for flag, p := range o.load.Inputs() {
		if p == "" {
			continue
		}
		files++
		if err := usage(kube.InPod(flag, p, configMap)); err != nil {
			return err
		}
	}
	if t := o.target.Tools; t != "" && t != "builtin" {
		files++
		if err := usage(kube.InPod("--tools", t, configMap)); err != nil {
			return err
		}
	}
	if err := bench.CheckWorkload(o.load.Workload); err != nil {
		return usageErr("%w", err)
	}
	if files > 0 {
		// The files are the pod's, not here: the load's own checks run
		// in the pod, before its first request.
		return nil
	}
	if _, err := o.load.prepare(run, o.target.Endpoint); err != nil {
		return usageErr("run flags after --: %w", err)
	}
	return nil
}

// checkSimFlags checks a simulator pod's knee sim flags as knee sim would
// before it serves (see checkRunFlags).
func checkSimFlags(args []string, configMap string) error {
	o := &simOptions{}
	sim := newSimCmdWith(o)
	if err := sim.ParseFlags(args); err != nil {
		return usageErr("sim flags after --: %w", err)
	}
	if rest := sim.Flags().Args(); len(rest) > 0 {
		return usageErr("sim flags after --: unexpected %q", rest)
	}
	for _, f := range []string{"host", "port", "replicas", "print-config"} {
		if sim.Flags().Changed(f) {
			return usageErr("sim flags after --: --%s is set by the manifest (each pod serves one replica on port %d; scale with k8s sim --replicas)", f, kube.SimPort)
		}
	}
	if sim.Flags().Changed("api-key") {
		return usageErr("sim flags after --: --api-key would stand in clear in the manifest")
	}
	if err := o.Check(); err != nil {
		return usageErr("sim flags after --: %w", err)
	}
	for flag, p := range map[string]string{"--sim-models": o.Models, "--sim-responses": o.Responses} {
		if p == "" || strings.HasPrefix(p, "builtin:") {
			continue
		}
		if err := usage(kube.InPod(flag, p, configMap)); err != nil {
			return err
		}
	}
	if o.Preset != "" {
		if _, _, err := o.PresetModels(); err != nil {
			return usageErr("sim flags after --: %w", err)
		}
	}
	return nil
}

// noCredentials refuses a credential in the run flags
// (kube.CheckRunFlags).
func noCredentials(run *cobra.Command, o *runOptions) error {
	given := map[string]string{}
	run.Flags().Visit(func(f *pflag.Flag) { given[f.Name] = f.Value.String() })
	if err := kube.CheckRunFlags(given, o.target.Headers); err != nil {
		return usageErr("run flags after --: %w", err)
	}
	return nil
}
