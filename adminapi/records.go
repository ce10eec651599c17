package adminapi

import (
	"encoding/json"
	"net/http"

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
	var in records.Input
	if err := decode(c.r, &in); err != nil {
		return 0, nil, err
	}
	r, err := s.records.UpdateRecord(c.r.Context(), c.principal, c.r.PathValue("id"), c.r.PathValue("record_id"), in)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, recordViewOf(r), nil
}

func (s *Server) deleteRecord(c *call) (int, any, error) {
	if err := s.records.DeleteRecord(c.r.Context(), c.principal, c.r.PathValue("id"), c.r.PathValue("record_id")); err != nil {
		return 0, nil, err
	}
	return http.StatusNoContent, nil, nil
}
