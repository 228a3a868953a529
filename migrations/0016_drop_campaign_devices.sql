-- Its rows are in device_bitmaps now (0015 and DeviceBitmaps.fillFromDeviceRows).
DROP TABLE campaign_devices;
