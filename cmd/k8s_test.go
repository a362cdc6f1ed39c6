package cmd

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kneebench/knee/bench/driver"
	"github.com/kneebench/knee/kube"
	batchv1 "k8s.io/api/batch/v1"
	"sigs.k8s.io/yaml"
)

// TestK8sJobRoundTrips: knee k8s job prints a Job that decodes strictly as
// a batch/v1 Job and renders back to the same bytes, whose pods' arguments
// knee run accepts, starting a --start-delay from now.
func TestK8sJobRoundTrips(t *testing.T) {
	t.Parallel()
	before := time.Now()
	code, out, errOut := execute(t, "k8s", "job", "--shards", "3", "--base-url", "http://vllm:8000/v1", "--start-delay", "90s",
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
	at, err := driver.ParseInstant(run.Flags().Lookup("start-at").Value.String())
	if err != nil || at.Before(before.Add(88*time.Second)) || at.After(time.Now().Add(91*time.Second)) {
		t.Errorf("start-at %v (%v), want about 90 s from now", at, err)
	}
	if got := run.Flags().Lookup("shards").Value.String(); got != "3" || *job.Spec.Completions != 3 {
		t.Errorf("--shards %s, %d completions, want 3", got, *job.Spec.Completions)
	}
	for _, bad := range []struct {
		args []string
		want string
	}{
		{[]string{"--", "--rate", "fast"}, "invalid argument"},
		{[]string{"--", "--output", "x.json"}, "set by the manifest"},
		{[]string{"--", "stray"}, "unexpected"},
		{[]string{"--", "--rate", "0"}, "--rate 0 measures nothing"},
		{[]string{"--", "--rate", "5", "--max-tokens", "0"}, "--max-tokens must be at least 1"},
		{[]string{"--", "--rate", "5", "--api-key", "sk-secret"}, "--api-key-secret"},
		{[]string{"--", "--rate", "5", "--header", "authorization: Bearer sk-secret"}, "carries a credential"},
		{[]string{"--", "--rate", "5", "--header", "Content-Length: 5"}, "frames the request"},
		{[]string{"--", "--rate", "5", "--extra-body", `{"stream": false}`}, "knee always streams"},
		{[]string{"--", "--rate", "5", "--dataset", "prompts.jsonl"}, "--inputs-configmap"},
		{[]string{"--inputs-configmap", "in", "--", "--rate", "5", "--dataset", "/data/prompts.jsonl"}, "/inputs/prompts.jsonl"},
		{[]string{"--", "--rate", "5", "--tools", "tools.json"}, "--inputs-configmap"},
		{[]string{"--name", "Knee_Shards", "--", "--rate", "5"}, "not a DNS label"},
		{[]string{"--api-key-secret", "Bad_Name", "--", "--rate", "5"}, "--api-key-secret"},
	} {
		code, out, errOut := execute(t, append([]string{"k8s", "job", "--shards", "2", "--target", "http://t/v1"}, bad.args...)...)
		if code != ExitUsage || !strings.Contains(errOut, bad.want) || strings.Contains(out, "sk-secret") {
			t.Errorf("k8s job %q: exit %d, %q; want 2 and %q", bad.args, code, errOut, bad.want)
		}
	}
	for _, bad := range []struct {
		args []string
		want string
	}{
		{[]string{"--", "--bogus"}, "unknown flag"},
		{[]string{"--", "--port", "9000"}, "set by the manifest"},
		{[]string{"--", "--host", "127.0.0.1"}, "set by the manifest"},
		{[]string{"--", "--preset", "nope/x"}, "unknown GPU"},
		{[]string{"--", "--models", "my-models.yml"}, "--inputs-configmap"},
		{[]string{"--namespace", "a.b"}, "not a DNS label"},
	} {
		if code, _, errOut := execute(t, append([]string{"k8s", "sim", "--replicas", "2"}, bad.args...)...); code != ExitUsage || !strings.Contains(errOut, bad.want) {
			t.Errorf("k8s sim %q: exit %d, %q; want 2 and %q", bad.args, code, errOut, bad.want)
		}
	}
	code, out, errOut = execute(t, "k8s", "job", "--shards", "2", "--target", "http://t/v1", "--api-key-secret", "vllm-key",
		"--inputs-configmap", "knee-inputs", "--", "--rate", "5", "--dataset", "/inputs/prompts.jsonl")
	if code != 0 || !strings.Contains(out, "secretKeyRef") || !strings.Contains(out, `mountPath: "/inputs"`) {
		t.Errorf("k8s job with a key Secret and inputs: exit %d\n%s%s", code, out, errOut)
	}
	code, out, _ = execute(t, "k8s", "sim", "--replicas", "3", "--", "--preset", "h100-80gb/llama-3.1-8b")
	if code != 0 || !strings.Contains(out, "kind: Deployment") || !strings.Contains(out, "clusterIP: None") || !strings.Contains(out, "replicas: 3") {
		t.Errorf("k8s sim: exit %d\n%s", code, out)
	}
}

// TestK8sJobRefusesCredentials: every route by which a credential could
// reach a shard pod's arguments is refused before a manifest is printed,
// naming the flag that gives it from a Secret instead.
func TestK8sJobRefusesCredentials(t *testing.T) {
	t.Parallel()
	job := []string{"k8s", "job", "--shards", "2", "--target", "http://vllm:8000/v1", "--"}
	for _, tc := range []struct {
		args []string
		fix  string
	}{
		{append(slices.Clone(job), "--rate", "2", "--duration", "1m", "--extra-body", `{"access_token":"sk-AT"}`), "--header-secret"},
		{[]string{"k8s", "job", "--shards", "2", "--base-url", "http://u:p@vllm:8000/v1", "--", "--rate", "2"}, "--base-url-secret"},
		{[]string{"k8s", "job", "--shards", "2", "--target", "http://vllm:8000/v1?key=K", "--", "--rate", "2"}, "--base-url-secret"},
		{append(slices.Clone(job), "--rate", "2", "--server-metrics-url", "http://vllm:8000/metrics?token=T"), "--server-metrics-url-secret"},
		{append(slices.Clone(job), "--rate", "2", "--header", "X-Api-Key: K"), "--header-secret X-Api-Key=SECRET"},
		{append(slices.Clone(job), "--rate", "2", "--api-key", "K"), "--api-key-secret"},
		{append(slices.Clone(job), "--rate", "2", "--model", "sk-abcdefghijklmnopqrstuv"), "carries a token"},
	} {
		code, out, errOut := execute(t, tc.args...)
		if code != ExitUsage || out != "" || !strings.Contains(errOut, tc.fix) {
			t.Errorf("%v: exit %d, %q; want exit 2 naming %s and no manifest", tc.args[len(tc.args)-2:], code, errOut, tc.fix)
		}
	}
	code, out, errOut := execute(t, "k8s", "job", "--shards", "2", "--base-url-secret", "vllm:url", "--header-secret", "X-Api-Key=vllm:key",
		"--server-metrics-url-secret", "vllm:metrics", "--", "--rate", "2", "--duration", "1m")
	if code != 0 || !strings.Contains(out, "$(KNEE_TARGET)") || !strings.Contains(out, "X-Api-Key:$(KNEE_HEADER_1)") {
		t.Errorf("secrets as references: exit %d\n%s\n%s", code, errOut, out)
	}
}

// TestK8sJobIgnoresTheLocalBaseURL: the run flags' target checks leave
// the base URL to the manifest, so a $OPENAI_BASE_URL set here (even one
// run would refuse) does not stop the manifest.
func TestK8sJobIgnoresTheLocalBaseURL(t *testing.T) {
	t.Setenv("OPENAI_BASE_URL", "localhost:8000/v1")
	code, out, errOut := execute(t, "k8s", "job", "--shards", "2", "--base-url", "http://t/v1", "--", "--rate", "5")
	if code != 0 || !strings.Contains(out, "kind: Job") {
		t.Errorf("exit %d, %q", code, errOut)
	}
}
