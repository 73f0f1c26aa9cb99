package index

// Window returns the docs ids, in order, with their stored fields and
// feature vectors read from one snapshot: what a search re-ranks. A
// missing doc is the zero Doc (ID ""); Features is nil for a doc without a
// vector.
func (ix *Index) Window(ids []string) ([]Doc, error) {
	docs := make([]Doc, len(ids))
	err := ix.visitStored(ids, func(i int, fields, features []byte) (err error) {
		docs[i].ID = ids[i]
		if err = decodeFields(fields, &docs[i]); err == nil && features != nil {
			docs[i].Features, err = decodeFeatures(features)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return docs, nil
}
