// `import SFX` is all an application needs: the engine (SFXPlayback), the recorder (SFXRecording),
// and the types of the layers below that
// its API speaks of (VoiceID, SoundGroup, VoicePriority; PlaybackRequest, SampleFormat,
// ALSAError, MasterState; AudioFileInfo, MediaError, CueLimits; VibrationPattern, HapticError).
@_exported import SFXPlayback
@_exported import SFXRecording
@_exported import SFXCore
@_exported import SFXDevice
@_exported import SFXMedia
@_exported import SFXHaptics
