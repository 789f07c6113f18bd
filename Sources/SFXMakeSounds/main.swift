import SFXSoundDesign
print("make")
