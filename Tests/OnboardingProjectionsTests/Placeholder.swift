// placeholder until the first projection tests land
