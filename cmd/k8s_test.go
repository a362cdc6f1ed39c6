package cmd

import (
	"strings"
	"testing"
	"time"

	"github.com/kneebench/knee/kube"
	batchv1 "k8s.io/api/batch/v1"
	"sigs.k8s.io/yaml"
)

// TestK8sJobRoundTrips: knee k8s job prints a Job that decodes strictly as
// a batch/v1 Job and renders back to the same bytes, whose pods' arguments
// knee run accepts, starting a --start-delay from now.
func TestK8sJobRoundTrips(t *testing.T) {
	before := time.Now()
	code, out, errOut := execute(t, "k8s", "job", "--shards", "3", "--target", "http://vllm:8000/v1", "--start-delay", "90s",
		"--", "--rate", "12", "--duration", "2m", "--input-tokens", "256")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	var job batchv1.Job
	if err := yaml.UnmarshalStrict([]byte(out), &job); err != nil {
		t.Fatalf("not a Job: %v\n%s", err, out)
	}
	again, err := kube.YAML(&job)
	if err != nil {
		t.Fatal(err)
	}
	if string(again) != out {
		t.Errorf("the Job does not round-trip:\n%s\n---\n%s", out, again)
	}
	args := job.Spec.Template.Spec.Containers[0].Args
	if args[0] != "run" {
		t.Fatalf("the pods run %q", args)
	}
	run := newRunCmd()
	if err := run.ParseFlags(args[1:]); err != nil {
		t.Fatalf("knee run refuses the pods' arguments %q: %v", args, err)
	}
	at, err := parseInstant(run.Flags().Lookup("start-at").Value.String())
	if err != nil || at.Before(before.Add(88*time.Second)) || at.After(time.Now().Add(91*time.Second)) {
		t.Errorf("start-at %v (%v), want about 90 s from now", at, err)
	}
	if got := run.Flags().Lookup("shards").Value.String(); got != "3" || *job.Spec.Completions != 3 {
		t.Errorf("--shards %s, %d completions, want 3", got, *job.Spec.Completions)
	}
	for _, bad := range [][]string{{"--", "--rate", "fast"}, {"--", "--output", "x.json"}, {"--", "stray"}} {
		if code, _, _ := execute(t, append([]string{"k8s", "job", "--shards", "2", "--target", "http://t/v1"}, bad...)...); code != ExitUsage {
			t.Errorf("k8s job %q: exit %d, want 2", bad, code)
		}
	}
	code, out, _ = execute(t, "k8s", "sim", "--replicas", "3", "--", "--preset", "h100-80gb/llama-3.1-8b")
	if code != 0 || !strings.Contains(out, "kind: Deployment") || !strings.Contains(out, "clusterIP: None") || !strings.Contains(out, "replicas: 3") {
		t.Errorf("k8s sim: exit %d\n%s", code, out)
	}
}
