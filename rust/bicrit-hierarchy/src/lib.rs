//! Hierarchical classification: HSVM, NHSVM, NHSVM3 and Shared SVM (thesis hierarchical
//! chapter; DESIGN §6).
