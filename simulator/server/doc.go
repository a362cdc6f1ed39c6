// Package server is the simulator's room for serving: the fasthttp server
// (its only importer in the simulator), request decoding and validation,
// SSE and unary answers, fault injection, the admin and summary
// endpoints, and the models.yml configuration it builds its engines from.
//
// It joins the other rooms without reaching into them: content says what
// is answered, engine says when each token is due, telemetry records what
// happened; only their plain types (Plan, TokenEvent, the step) cross. It
// never imports the bench, nor the simulator's composition root.
package server
