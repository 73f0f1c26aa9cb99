// Package feedback records what users do with the answers: impressions and
// clicks on search results and on friend and group suggestions, each with
// the rank it was shown at and the re-ranker or model version that ranked
// it. Events are kept in a Log (a Redis stream, or append-only files under
// the cache directory) under a retention bound, and turned back into
// validation judgments (Judgments) by a position-based click model.
package feedback

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"
)

// Kinds and surfaces of an event.
const (
	Impression = "impression"
	Click      = "click"

	Search  = "search"
	Friends = "friends"
	Groups  = "groups"
)

// Limits of one request to POST /v1/events.
const (
	MaxBatch     = 100      // events in one request
	MaxBodyBytes = 64 << 10 // bytes of one request body
	MaxQueryLen  = 1000     // characters of a query, as the search endpoint
	MaxIDLen     = 256      // characters of an item, user, session, re-ranker or model version
	MaxRank      = 1000     // the largest k the search endpoint answers
)

// Event is one impression or click. Query and Rerank are a search's (the
// response's "query" and "rerank.strategy"); User and ModelVersion a
// friend or group suggestion's (the response's "user" and
// "model_version").
type Event struct {
	Kind         string    `json:"kind"`
	Surface      string    `json:"surface"`
	Query        string    `json:"query,omitempty"`
	User         string    `json:"user,omitempty"`
	Item         string    `json:"item"`
	Rank         int       `json:"rank"`
	Rerank       string    `json:"rerank,omitempty"`
	ModelVersion string    `json:"model_version,omitempty"`
	Session      string    `json:"session"`
	ClientTime   time.Time `json:"client_time"`
	// ServerTime is when the server received the event; it sets it.
	ServerTime time.Time `json:"server_time"`
}

// Ranker is what ranked the list the event is on: the re-ranker of a
// search, the model version of a suggestion.
func (e Event) Ranker() string {
	if e.Surface == Search {
		return e.Rerank
	}
	return e.ModelVersion
}

// Subject is what the list answered: the query of a search, the user of a
// suggestion.
func (e Event) Subject() string {
	if e.Surface == Search {
		return e.Query
	}
	return e.User
}

// ErrEvent wraps every error of a bad event or batch.
var ErrEvent = errors.New("bad event")

// Decode reads a request body, {"events": [...]}, of at most MaxBatch
// events, each checked by Validate, and stamps each with now. An error
// names the event (by its index from 0) and what is wrong with it; then no
// event is returned.
func Decode(r io.Reader, now time.Time) ([]Event, error) {
	var body struct {
		Events []json.RawMessage `json:"events"`
	}
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&body); err != nil {
		return nil, fmt.Errorf(`%w: the body must be {"events": [...]}: %w`, ErrEvent, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%w: the body holds more than one JSON value", ErrEvent)
	}
	switch {
	case len(body.Events) == 0:
		return nil, fmt.Errorf(`%w: "events" is missing or empty`, ErrEvent)
	case len(body.Events) > MaxBatch:
		return nil, fmt.Errorf("%w: %d events: at most %d in one request", ErrEvent, len(body.Events), MaxBatch)
	}
	out := make([]Event, len(body.Events))
	for i, raw := range body.Events {
		d := json.NewDecoder(bytes.NewReader(raw))
		d.DisallowUnknownFields()
		if err := d.Decode(&out[i]); err != nil {
			return nil, fmt.Errorf("%w: event %d: %v", ErrEvent, i, err)
		}
		if !out[i].ServerTime.IsZero() {
			return nil, fmt.Errorf(`%w: event %d: "server_time" is the server's to set`, ErrEvent, i)
		}
		if err := out[i].Validate(); err != nil {
			return nil, fmt.Errorf("%w: event %d: %v", ErrEvent, i, err)
		}
		out[i].ServerTime = now.UTC()
	}
	return out, nil
}

// Validate reports what is wrong with e, if anything.
func (e Event) Validate() error {
	if e.Kind != Impression && e.Kind != Click {
		return fmt.Errorf(`unknown kind %q (impression or click)`, e.Kind)
	}
	if e.Rank < 1 || e.Rank > MaxRank {
		return fmt.Errorf("rank %d: ranks run from 1 to %d", e.Rank, MaxRank)
	}
	if e.ClientTime.IsZero() {
		return errors.New(`"client_time" is missing (RFC 3339, e.g. 2026-01-02T15:04:05.000Z)`)
	}
	if err := field("session", e.Session, MaxIDLen); err != nil {
		return err
	}
	if err := field("item", e.Item, MaxIDLen); err != nil {
		return err
	}
	switch e.Surface {
	case Search:
		if e.User != "" || e.ModelVersion != "" {
			return errors.New(`a search event has "query" and "rerank", not "user" or "model_version"`)
		}
		if err := field("query", e.Query, MaxQueryLen); err != nil {
			return err
		}
		return field("rerank", e.Rerank, MaxIDLen)
	case Friends, Groups:
		if e.Query != "" || e.Rerank != "" {
			return fmt.Errorf(`a %s event has "user" and "model_version", not "query" or "rerank"`, e.Surface)
		}
		if err := field("user", e.User, MaxIDLen); err != nil {
			return err
		}
		return field("model_version", e.ModelVersion, MaxIDLen)
	}
	return fmt.Errorf("unknown surface %q (search, friends or groups)", e.Surface)
}

// field checks a required string: present, valid UTF-8, no control
// characters, at most max characters.
func field(name, v string, max int) error {
	switch {
	case strings.TrimSpace(v) == "":
		return fmt.Errorf("%q is missing", name)
	case utf8.RuneCountInString(v) > max:
		return fmt.Errorf("%q is %d characters: at most %d", name, utf8.RuneCountInString(v), max)
	case !utf8.ValidString(v) || strings.ContainsFunc(v, func(r rune) bool { return r < 0x20 || r == 0x7f }):
		return fmt.Errorf("%q holds invalid UTF-8 or a control character", name)
	}
	return nil
}
