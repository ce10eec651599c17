package adminapi

import (
	"bytes"
	"encoding/json"
	"net/http"

	"github.com/hostmint/hostmint/apierror"
	"github.com/hostmint/hostmint/records"
	"github.com/hostmint/hostmint/storage"
)

type recordView struct {
	ID   string          `json:"id"`
	Name string          `json:"name"`
	Type string          `json:"type"`
	TTL  int             `json:"ttl"`
	Data json.RawMessage `json:"data"`
}

func recordViewOf(r *storage.Record) recordView {
	return recordView{ID: r.ID, Name: r.Name, Type: r.Type, TTL: records.TTL, Data: json.RawMessage(r.Data)}
}

type recordsView struct {
	Records []recordView `json:"records"`
}

func (s *Server) listRecords(c *call) (int, any, error) {
	_, rs, err := s.records.Records(c.r.Context(), c.principal, c.r.PathValue("id"))
	if err != nil {
		return 0, nil, err
	}
	out := recordsView{Records: make([]recordView, len(rs))}
	for i := range rs {
		out.Records[i] = recordViewOf(&rs[i])
	}
	return http.StatusOK, out, nil
}

func (s *Server) createRecord(c *call) (int, any, error) {
	var in records.Input
	if err := decode(c.r, &in); err != nil {
		return 0, nil, err
	}
	r, err := s.records.CreateRecord(c.r.Context(), c.principal, c.r.PathValue("id"), in)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusCreated, recordViewOf(r), nil
}

func (s *Server) updateRecord(c *call) (int, any, error) {
	in, err := decodeRecordPut(c.r, c.r.PathValue("record_id"))
	if err != nil {
		return 0, nil, err
	}
	r, err := s.records.UpdateRecord(c.r.Context(), c.principal, c.r.PathValue("id"), c.r.PathValue("record_id"), in)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, recordViewOf(r), nil
}

// decodeRecordPut reads a PUT body, which may be the record as GET answered
// it, edited: the read-only id and ttl are taken when they are the
// stored values and refused (400) when not, and the fields may come in
// data (as GET shows them) or at the top level, not both. Clients that
// read, edit and write back (Terraform providers, most SDKs) work as is.
func decodeRecordPut(r *http.Request, recordID string) (records.Input, error) {
	var in records.Input
	var body map[string]json.RawMessage
	if err := decode(r, &body); err != nil {
		return in, err
	}
	if raw, ok := body["id"]; ok {
		var id string
		if json.Unmarshal(raw, &id) != nil || id != recordID {
			return in, apierror.BadRequest("id %s is not this record's (%s): a record's id cannot change", raw, recordID)
		}
		delete(body, "id")
	}
	if raw, ok := body["ttl"]; ok {
		var ttl int
		if json.Unmarshal(raw, &ttl) != nil || ttl != records.TTL {
			return in, apierror.BadRequest("ttl %s cannot be set: a record's TTL is always %d", raw, records.TTL)
		}
		delete(body, "ttl")
	}
	if raw, ok := body["data"]; ok {
		var data map[string]json.RawMessage
		if json.Unmarshal(raw, &data) != nil || data == nil {
			return in, apierror.BadRequest("data must be an object of the record's fields, as GET answers it")
		}
		for k, v := range data {
			if _, twice := body[k]; twice {
				return in, apierror.BadRequest("%s is sent both in data and at the top level: send it once", k)
			}
			body[k] = v
		}
		delete(body, "data")
	}
	b, _ := json.Marshal(body)
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		return in, jsonError(err)
	}
	return in, nil
}

func (s *Server) deleteRecord(c *call) (int, any, error) {
	if err := s.records.DeleteRecord(c.r.Context(), c.principal, c.r.PathValue("id"), c.r.PathValue("record_id")); err != nil {
		return 0, nil, err
	}
	return http.StatusNoContent, nil, nil
}
