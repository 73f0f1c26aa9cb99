package dataset

import (
	"fmt"
	"path/filepath"
)

// Corel5k files, relative to the data directory, and their manifest md5s.
const (
	Corel5kARFF    = "images/corel5k/Corel5k-sparse.arff"
	Corel5kXML     = "images/corel5k/Corel5k.xml"
	Corel5kARFFMD5 = "3e62f5d8d9b412eb444c27122f619ad9"
	Corel5kXMLMD5  = "01e2ed10a486ef60e1a6f7496f0b2070"

	// Corel5k shape: images, visual "blob" features, keywords.
	Corel5kImages   = 5000
	Corel5kFeatures = 499
	Corel5kLabels   = 374
)

// LoadCorel5k loads Corel5k (Duygulu et al., ECCV 2002; Mulan distribution)
// from dataDir after checking both files against their manifest md5s (a
// mismatch is an error wrapping ErrChecksum). The result has 5000 images,
// 499 binary blob features (Cluster1..Cluster499) and 374 keywords (city,
// mountain, sky, ...), each image with 1 to 5 keywords; the shape is
// checked.
func LoadCorel5k(dataDir string) (*MultiLabel, error) {
	for _, rel := range []string{Corel5kARFF, Corel5kXML} {
		if err := VerifyMD5(dataDir, rel); err != nil {
			return nil, err
		}
	}
	ml, err := LoadMulan(filepath.Join(dataDir, filepath.FromSlash(Corel5kARFF)), filepath.Join(dataDir, filepath.FromSlash(Corel5kXML)))
	if err != nil {
		return nil, err
	}
	if len(ml.X) != Corel5kImages || len(ml.FeatureNames) != Corel5kFeatures || len(ml.LabelNames) != Corel5kLabels {
		return nil, fmt.Errorf("dataset: Corel5k: got %d images x %d features, %d labels; want %d x %d, %d",
			len(ml.X), len(ml.FeatureNames), len(ml.LabelNames), Corel5kImages, Corel5kFeatures, Corel5kLabels)
	}
	return ml, nil
}
