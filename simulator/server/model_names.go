package server

import simmodel "github.com/kneebench/knee/simulator/model"

// The model room's names, as the server's code names them: the models
// file's schema and what a model does live there, without HTTP.
type (
	ArchitectureSpec = simmodel.ArchitectureSpec
	EfficiencySpec   = simmodel.EfficiencySpec
	EncoderCache     = simmodel.EncoderCache
	EngineKind       = simmodel.EngineKind
	ExpertsSpec      = simmodel.ExpertsSpec
	FaultRule        = simmodel.FaultRule
	FaultSpec        = simmodel.FaultSpec
	Fetch            = simmodel.Fetch
	FitSpec          = simmodel.FitSpec
	FixedRateSpec    = simmodel.FixedRateSpec
	HardwareSpec     = simmodel.HardwareSpec
	Images           = simmodel.Images
	KVCacheSpec      = simmodel.KVCacheSpec
	LatencySpec      = simmodel.LatencySpec
	LoRASpec         = simmodel.LoRASpec
	ModelSpec        = simmodel.ModelSpec
	ModelsFile       = simmodel.ModelsFile
	PoolingSpec      = simmodel.PoolingSpec
	ReasoningSpec    = simmodel.ReasoningSpec
	SchedulerSpec    = simmodel.SchedulerSpec
	ToolSpec         = simmodel.ToolSpec
	VisionSpec       = simmodel.VisionSpec
	WeightsSpec      = simmodel.WeightsSpec
)

const (
	EngineFixedRate    = simmodel.EngineFixedRate
	EngineInstant      = simmodel.EngineInstant
	EngineScheduler    = simmodel.EngineScheduler
	Fault401           = simmodel.Fault401
	Fault429           = simmodel.Fault429
	Fault500           = simmodel.Fault500
	Fault503           = simmodel.Fault503
	FaultContextLength = simmodel.FaultContextLength
	FaultCut           = simmodel.FaultCut
	FaultOverload      = simmodel.FaultOverload
	FaultSpike         = simmodel.FaultSpike
	FaultStall         = simmodel.FaultStall
	SchedulesSGLang    = simmodel.SchedulesSGLang
	SchedulesVLLM      = simmodel.SchedulesVLLM
)

var (
	AddImages         = simmodel.AddImages
	CallTool          = simmodel.CallTool
	CheckRules        = simmodel.CheckRules
	EngineNames       = simmodel.EngineNames
	RulesProblem      = simmodel.RulesProblem
	FlagWords         = simmodel.FlagWords
	FaultDefaults     = simmodel.FaultDefaults
	FaultKinds        = simmodel.FaultKinds
	FixedRateOf       = simmodel.FixedRateOf
	ParseModels       = simmodel.ParseModels
	PoolPlan          = simmodel.PoolPlan
	PresetKV          = simmodel.PresetKV
	PresetModels      = simmodel.PresetModels
	SGLangRules       = simmodel.SGLangRules
	Scripted          = simmodel.Scripted
	Think             = simmodel.Think
	ToolNamed         = simmodel.ToolNamed
	ValidKind         = simmodel.ValidKind
	VisionFamilies    = simmodel.VisionFamilies
	VisionFamilyNames = simmodel.VisionFamilyNames
	WithImages        = simmodel.WithImages
)
