// An app writes one import: `import OnboardingStore` also brings the events and their codec
// (OnboardingModel) and the projections' types (`Screen`, `Flow`, `LockoutDecision`,
// `HistoryQuery`, …), which the store's API takes and returns.
@_exported import OnboardingModel
@_exported import OnboardingProjections
