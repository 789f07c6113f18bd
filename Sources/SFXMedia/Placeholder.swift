import SFXCore
