package cmd

import (
	"net/textproto"
	"path"
	"slices"
	"strings"

	"github.com/kneebench/knee/kube"
)

// secretHeaders are request headers that carry credentials: in a manifest
// they would be readable by anyone who can read the Job.
var secretHeaders = []string{"Authorization", "Proxy-Authorization", "X-Api-Key", "Api-Key", "Cookie"}

// checkRunFlags checks a shard pod's knee run flags with the parser and
// the checks knee run itself uses, so that a typo or a bad value fails
// here and not in N pods: flags the manifest sets are refused, so are
// credentials (a Secret carries them), and input files must be in the
// pod, on the --inputs-configmap mount.
func checkRunFlags(args []string, configMap string) error {
	o := &runOptions{}
	run := newRunCmdWith(o)
	if err := run.ParseFlags(args); err != nil {
		return usageErr("run flags after --: %v", err)
	}
	if rest := run.Flags().Args(); len(rest) > 0 {
		return usageErr("run flags after --: unexpected %q", rest)
	}
	for _, f := range []string{"base-url", "shard", "shards", "start-at", "output"} {
		if run.Flags().Changed(f) {
			return usageErr("run flags after --: --%s is set by the manifest", f)
		}
	}
	if run.Flags().Changed("api-key") {
		return usageErr("run flags after --: --api-key would stand in clear in the manifest and every pod's description: put the key in a Secret and give --api-key-secret NAME[:KEY]")
	}
	for _, h := range o.target.headers {
		name, _, _ := strings.Cut(h, ":")
		if slices.Contains(secretHeaders, textproto.CanonicalMIMEHeaderKey(strings.TrimSpace(name))) {
			return usageErr("run flags after --: --header %s carries a credential, which would stand in clear in the manifest: use --api-key-secret for a Bearer token", strings.TrimSpace(name))
		}
	}
	files := 0
	for flag, p := range o.load.inputs() {
		if p == "" {
			continue
		}
		files++
		if err := inPod(flag, p, configMap); err != nil {
			return err
		}
	}
	if err := checkWorkload(o.workload); err != nil {
		return err
	}
	if files > 0 {
		// The files are the pod's, not here: the load's own checks run
		// in the pod, before its first request.
		return nil
	}
	if _, err := buildLevelPlan(run, &o.load, &o.voice, o.workload); err != nil {
		return usageErr("run flags after --: %v", err)
	}
	return nil
}

// checkSimFlags checks a simulator pod's knee sim flags as knee sim would
// before it serves (see checkRunFlags).
func checkSimFlags(args []string, configMap string) error {
	o := &simOptions{}
	sim := newSimCmdWith(o)
	if err := sim.ParseFlags(args); err != nil {
		return usageErr("sim flags after --: %v", err)
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
	if o.shutdownGrace < 0 || o.maxBody <= 0 {
		return usageErr("sim flags after --: --shutdown-grace must not be negative and --max-body-bytes must be positive")
	}
	for flag, p := range map[string]string{"--models": o.models, "--responses": o.responses} {
		if p == "" || strings.HasPrefix(p, "builtin:") {
			continue
		}
		if err := inPod(flag, p, configMap); err != nil {
			return err
		}
	}
	if o.preset != "" {
		if _, err := o.presetModels(); err != nil {
			return usageErr("sim flags after --: %v", err)
		}
	}
	return nil
}

// inPod refuses an input file a pod cannot have: one not on the
// --inputs-configmap mount.
func inPod(flag, p, configMap string) error {
	if configMap == "" {
		return usageErr("%s %s: a pod has no files of this machine; put the file in a ConfigMap, give --inputs-configmap NAME and %s %s/%s", flag, p, flag, kube.InputsDir, path.Base(p))
	}
	if clean := path.Clean(p); !strings.HasPrefix(clean, kube.InputsDir+"/") {
		return usageErr("%s %s: the ConfigMap %s is mounted at %s: give %s %s/%s", flag, p, configMap, kube.InputsDir, flag, kube.InputsDir, path.Base(p))
	}
	return nil
}
