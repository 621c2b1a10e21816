package processor
